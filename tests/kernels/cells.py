"""Device classes: one cell-average kernel over two layouts of cells. A structured cell set
computes its connectivity from the grid's size; an explicit one reads it from an array. The
class-level `points_per_cell` is a compile-time constant (it sizes a local array); the
instance's numbers and arrays are the kernel's arguments. Run from Python (test_device_classes.py)
and from C++ (test_device_classes.cpp), where the objects are built by class name."""
import tack


@tack.data_oriented
class StructuredCells:
    """The quads of a grid of nx x ny points, x fastest: cell c has corners i, i + 1 along x
    and j, j + 1 along y, counter-clockwise from (i, j)."""

    points_per_cell = 4
    __tack_iterate__ = ("num_cells",)

    def __init__(self, nx, ny):
        self.nx = nx
        self.num_cells = (nx - 1) * (ny - 1)

    @tack.func
    def point(self, c, k):
        i = c % (self.nx - 1)
        j = c // (self.nx - 1)
        return (j + k // 2) * self.nx + i + (k + 1) // 2 % 2


@tack.data_oriented
class ExplicitCells:
    """Cells listed by their points: connectivity[c, k] is point k of cell c."""

    points_per_cell = 4
    __tack_iterate__ = ("num_cells",)

    def __init__(self, connectivity):
        self.connectivity = connectivity
        self.num_cells = connectivity.shape[0]

    @tack.func
    def point(self, c, k):
        return self.connectivity[c, k]


@tack.data_oriented
class ExplicitTriangles(ExplicitCells):
    """Triangles: the same layout with three points per cell."""

    points_per_cell = 3


@tack.kernel
def cell_average(cells: tack.template(), point_values, out):
    """out[c]: the mean of point_values over the points of cell c."""
    for c in cells:
        ids = tack.local_array(tack.i64, cells.points_per_cell)
        for k in range(cells.points_per_cell):
            ids[k] = cells.point(c, k)
        total = 0.0
        for k in range(cells.points_per_cell):
            total += point_values[ids[k]]
        out[c] = total / cells.points_per_cell
