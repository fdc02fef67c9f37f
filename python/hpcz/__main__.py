"""python -m hpcz and the hpcz console script: the native CLI bundled in the wheel (hpcz/bin/hpcz).

On POSIX the process becomes the CLI (os.execv), so exit codes, stdin/stdout piping and signals are
the CLI's own; elsewhere it runs as a child process and its exit code is returned.
"""

import os
import pathlib
import subprocess
import sys

# The CLI's exit code for a runtime failure (README, Exit codes): what a missing binary is here.
EXIT_UNAVAILABLE = 3


def cli_path():
    """The bundled CLI (hpcz/bin/hpcz, hpcz.exe on Windows); it exists only in an installed wheel."""
    name = "hpcz.exe" if os.name == "nt" else "hpcz"
    return pathlib.Path(__file__).resolve().parent / "bin" / name


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    exe = cli_path()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        sys.stderr.write(f"hpcz: the CLI is not in this installation ({exe}); install the package with pip\n")
        return EXIT_UNAVAILABLE
    cmd = [str(exe)] + args
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(cmd[0], cmd)  # does not return
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
