@g
def f():
    pass
@f
def g():
    pass
