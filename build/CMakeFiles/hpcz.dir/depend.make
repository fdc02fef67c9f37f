# Empty dependencies file for hpcz.
# This may be replaced when dependencies are built.
