"""Stand-in for the get-pip.py that ansible-test downloads from its own host (which this project's
machines cannot reach) to put pip into each sanity-test venv it creates. ansible-test runs it as
`python get_pip_X_Y.py --disable-pip-version-check pip==X.Y --no-setuptools --no-wheel` inside the
new, pip-less venv; this does the same with the standard library's ensurepip (the pip bundled with
Python, offline) followed by pip from PyPI at the version ansible-test asked for. tests/sanity.sh
copies it to ~/.ansible/test/cache/get_pip_X_Y.py, where ansible-test looks before downloading.
"""

import subprocess
import sys

ONLY_GET_PIP = ("--no-setuptools", "--no-wheel")


def main():
    args = sys.argv[1:]
    pip_args = [a for a in args if a not in ONLY_GET_PIP]
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
    subprocess.check_call([sys.executable, "-m", "pip", "install"] + pip_args)
    # ensurepip brings setuptools along; get-pip.py --no-setuptools would not have installed it
    # (ensurepip never installs wheel).
    if "--no-setuptools" in args:
        subprocess.check_call([sys.executable, "-m", "pip", "uninstall", "-y", "-q", "setuptools"])


if __name__ == "__main__":
    main()
