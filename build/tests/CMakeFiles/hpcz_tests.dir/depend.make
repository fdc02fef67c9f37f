# Empty dependencies file for hpcz_tests.
# This may be replaced when dependencies are built.
