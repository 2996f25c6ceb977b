"""How the validation drivers run commands: as a shell runs `CMD > OUT 2> ERR` or
`CMD | tee FILE`, or, in a dry run, by printing each command line instead (nothing is run,
nothing is written)."""

import argparse
import os
import shlex
import subprocess
import sys


class Failed(Exception):
    """A command whose failure ends the driver, with its exit status."""

    def __init__(self, line: str, status: int):
        super().__init__(f"{line}: exit {status}")
        self.status = status


class Unknown(str):
    """A value a dry run cannot know because an earlier command's output holds it; shown by
    its name wherever the value would go."""


def shell_line(argv, stdout=None, stderr=None, tee=None) -> str:
    """The shell form of a command and its redirections, as a dry run prints it."""
    line = shlex.join(str(a) for a in argv)
    if stdout:
        line += f" > {shlex.quote(str(stdout))}"
    if stderr:
        line += f" 2> {shlex.quote(str(stderr))}"
    if tee:
        line += f" | tee {shlex.quote(str(tee))}"
    return line


def exit_status(returncode: int) -> int:
    """A child's exit status as a shell gives it: 128 + N for a child ended by signal N."""
    return 128 - returncode if returncode < 0 else returncode


class Runner:
    """Runs commands with the driver's stdout and stderr unless redirected, or, when
    `dry_run`, prints them."""

    def __init__(self, dry_run: bool = False, show=print):
        self.dry_run = dry_run
        self.show = show

    def run(self, argv, stdout=None, stderr=None, tee=None, check=False) -> int:
        """Runs `argv`, its stdout into the file `stdout` (or through `tee` into that file as
        well as ours), its stderr into the file `stderr`; returns its exit status, or raises
        Failed if `check` and it is not 0. A command that cannot start has status 127 (126
        when not executable), as in a shell."""
        argv = [str(a) for a in argv]
        line = shell_line(argv, stdout, stderr, tee)
        if self.dry_run:
            self.show(line)
            return 0
        sys.stdout.flush()
        sys.stderr.flush()
        out = open(stdout, "wb") if stdout else None
        err = open(stderr, "wb") if stderr else None
        try:
            status = self._spawn(argv, out, err, tee)
        finally:
            for f in (out, err):
                if f:
                    f.close()
        if check and status != 0:
            raise Failed(line, status)
        return status

    def output(self, argv, merge_stderr=False):
        """Runs `argv` and returns (status, its stdout as text); its stderr goes to ours, or
        into the text when `merge_stderr`. A dry run prints the command and returns (0, None)."""
        argv = [str(a) for a in argv]
        if self.dry_run:
            self.show(shell_line(argv) + (" 2>&1" if merge_stderr else ""))
            return 0, None
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT if merge_stderr else None)
        except OSError as e:
            return not_started(argv, e, None), ""
        return exit_status(done.returncode), done.stdout.decode(errors="replace")

    def note(self, text: str) -> None:
        """In a dry run, prints `text` as a comment: something the driver does itself."""
        if self.dry_run:
            self.show(f"# {text}")

    def derive(self, what: str, compute, *args, dry):
        """The value `compute(*args)` reads from earlier outputs; in a dry run, `dry`, and
        `what` says how it would be read."""
        if self.dry_run:
            self.note(what)
            return dry
        return compute(*args)

    def write(self, path: str, text: str, append=False, shown=False) -> None:
        """Writes (or appends) `text` to `path`; a dry run says so instead, with the text
        itself when `shown`."""
        if self.dry_run:
            self.note(f"{'append to' if append else 'write'} {path}" + (":" if shown else ""))
            if shown:
                for line in text.splitlines():
                    self.show(f"#   {line}")
            return
        with open(path, "a" if append else "w") as f:
            f.write(text)

    def _spawn(self, argv, out, err, tee) -> int:
        try:
            if not tee:
                return exit_status(subprocess.run(argv, stdout=out, stderr=err).returncode)
            with open(tee, "wb") as copy, \
                    subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err) as child:
                while chunk := os.read(child.stdout.fileno(), 65536):
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.buffer.flush()
                    copy.write(chunk)
                return exit_status(child.wait())
        except OSError as e:
            return not_started(argv, e, err)


def not_started(argv, error: OSError, err) -> int:
    """A shell's one line and status for a command that cannot start: 126 when it is not
    executable, 127 otherwise; the line goes where the command's stderr would."""
    message = f"{argv[0]}: {error.strerror}\n".encode()
    if err:
        err.write(message)
    else:
        sys.stderr.buffer.write(message)
        sys.stderr.flush()
    return 126 if isinstance(error, PermissionError) else 127


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line, not argparse's usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")
