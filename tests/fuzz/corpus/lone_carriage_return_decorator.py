x = 1
@e
def f(): pass