# Empty dependencies file for hpcz_cli.
# This may be replaced when dependencies are built.
