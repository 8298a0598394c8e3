@e
def e():l