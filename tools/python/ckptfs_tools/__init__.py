"""The logic of ckptfs's scripts (tools/), as modules with unit tests.

The scripts under tools/ stay thin: they parse a command line, run programs
and hand the results to these modules, which do the arithmetic and write the
reports. Tests: tests/tools/python (ctest PythonTools.Unit).
"""
