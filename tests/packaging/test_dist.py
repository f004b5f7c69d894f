"""The distributions: `python -m build` makes an sdist and a wheel that install and run.

Slow (a build, two virtualenvs and the demo). No download: the build runs without
isolation against this environment's setuptools, and each fresh virtualenv gets episeg
from the built file (``--no-deps --no-index``) while its dependencies (torch, chromadb,
the packaged MiniLM) come from this environment's site-packages through a ``.pth`` line.
Such a path line does not run that folder's own ``.pth`` files, so the editable install
of the work tree stays out: the test checks that episeg is imported from the fresh venv.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from importlib.metadata import version
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _fresh_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    python = where / "bin" / "python"
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    Path(site.strip(), "_episeg_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # ensurepip may seed an old setuptools that cannot read this pyproject (PEP 639 license):
    # drop it so the sdist builds with this environment's setuptools, as `build` did.
    _run(python, "-m", "pip", "uninstall", "-q", "-y", "setuptools")
    return python


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # sdist first, then the wheel is built from the unpacked sdist (build's default).
    _run(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--skip-dependency-check",
        "--outdir",
        out,
        ROOT,
        cwd=out,
    )
    return out


class TestDistributions:
    def test_sdist_and_wheel_hold_the_package_data(self, dist: Path) -> None:
        import tarfile
        import zipfile

        (wheel,) = dist.glob("episeg-*.whl")
        (sdist,) = dist.glob("episeg-*.tar.gz")
        names = zipfile.ZipFile(wheel).namelist()
        for needed in (
            "episeg/py.typed",
            "episeg/data/sample_conversation.jsonl",
            "episeg/interfaces/static/browser.js",
            "episeg/interfaces/static/browser.html",
            "episeg/interfaces/deploy/haproxy.cfg",  # the scale-out proxy config (DEPLOYMENT.md)
            "episeg/client/__init__.py",
        ):
            assert needed in names, needed
        assert any(n.endswith("entry_points.txt") for n in names)
        with tarfile.open(sdist) as tar:
            assert any(
                n.endswith("src/episeg/interfaces/static/browser.css") for n in tar.getnames()
            )

    def test_the_wheel_installs_in_a_fresh_venv_and_runs_the_demo(
        self, dist: Path, tmp_path: Path
    ) -> None:
        (wheel,) = dist.glob("episeg-*.whl")
        python = _fresh_venv(tmp_path / "venv")
        _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel)
        where = _run(python, "-c", "import episeg; print(episeg.__file__)")
        assert where.startswith(str(tmp_path / "venv")), where
        episeg = tmp_path / "venv" / "bin" / "episeg"
        assert _run(episeg, "--version").strip() == f"episeg {version('episeg')}"
        demo = _run(episeg, "demo", "--path", tmp_path / "store", timeout=300)
        assert "episode" in demo.lower() and "salience" in demo.lower()

    def test_the_sdist_installs_in_a_fresh_venv(self, dist: Path, tmp_path: Path) -> None:
        (sdist,) = dist.glob("episeg-*.tar.gz")
        python = _fresh_venv(tmp_path / "venv")
        _run(
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            sdist,
        )
        episeg = tmp_path / "venv" / "bin" / "episeg"
        assert _run(episeg, "--version").strip() == f"episeg {version('episeg')}"
        _run(
            python,
            "-c",
            "from episeg.client import Client; from episeg.interfaces.aio import AsyncMemory",
        )
