"""A module of the code channel beside train.py."""


def mean(values):
    return sum(values) / len(values)
