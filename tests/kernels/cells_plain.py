"""cells.py's cell averages written with plain arguments: the objects' attributes passed one by
one, named as the compiler names them ("cells.connectivity" becomes cells_connectivity). Over
explicit cells, with the method a function of the same name, the generated code is the object
kernel's byte for byte (test_device_classes.cpp); over structured cells the function takes nx as
an argument, which the method reads from its object. Both are compiled by every target's offline
compiler (test_c_generators.cpp)."""
import tack

POINTS_PER_CELL = tack.constant(4)


@tack.func
def point(connectivity, c, k):
    return connectivity[c, k]


@tack.kernel
def cell_average(cells_connectivity, cells_num_cells, point_values, out):
    for c in range(cells_num_cells):
        ids = tack.local_array(tack.i64, POINTS_PER_CELL)
        for k in range(POINTS_PER_CELL):
            ids[k] = point(cells_connectivity, c, k)
        total = 0.0
        for k in range(POINTS_PER_CELL):
            total += point_values[ids[k]]
        out[c] = total / POINTS_PER_CELL


@tack.func
def grid_point(nx, c, k):
    i = c % (nx - 1)
    j = c // (nx - 1)
    return (j + k // 2) * nx + i + (k + 1) // 2 % 2


@tack.kernel
def structured_average(cells_nx, cells_num_cells, point_values, out):
    """The structured cell set's average: the same arithmetic, nx passed to the function."""
    for c in range(cells_num_cells):
        ids = tack.local_array(tack.i64, POINTS_PER_CELL)
        for k in range(POINTS_PER_CELL):
            ids[k] = grid_point(cells_nx, c, k)
        total = 0.0
        for k in range(POINTS_PER_CELL):
            total += point_values[ids[k]]
        out[c] = total / POINTS_PER_CELL
