"""The package's layout: imports flow one way, no hidden imports, every public name documented."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import eigenvision

PACKAGE = Path(eigenvision.__file__).parent


def _modules():
    """``{dotted name: path}`` of every module of the package."""
    found = {"eigenvision": PACKAGE / "__init__.py"}
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="eigenvision."):
        spec = info.module_finder.find_spec(info.name.rsplit(".", 1)[-1])
        found[info.name] = Path(spec.origin)
    return found


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The package modules an import statement of ``module`` loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "eigenvision"]
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    if node.level:
        base = base[: len(base) - node.level + (1 if is_package else 0)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "eigenvision":
        return []
    loaded = []
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        loaded.append(submodule if submodule in MODULES else target)
    return loaded


def _imports(module: str):
    """``(top-level imports, imports inside functions)`` of package modules by ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    top, inner = set(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for child in ast.walk(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)) and _resolve(module, child):
                    inner.append((node.name, _resolve(module, child)))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update(_resolve(module, node))
    return top, inner


def test_no_function_level_imports_of_the_package():
    """Imports are at the top, except the command line's (``eigenvision --help`` loads a
    command's module, and its libraries, only when that command is named) and the shipped
    identity model's in a ``"plda"`` Recognizer fitted without one."""
    hidden = {m: inner for m in MODULES if (inner := _imports(m)[1])}
    assert set(hidden) <= {"eigenvision.cli", "eigenvision.recognize"}
    assert {target for _, targets in hidden.get("eigenvision.cli", []) for target in targets} <= {
        "eigenvision._errors",
    }
    # the shipped identity model and finder are model files, and loading one needs Recognizer
    assert {
        target for _, targets in hidden.get("eigenvision.recognize", []) for target in targets
    } <= {
        "eigenvision.faces.compare",
    }


def _cycle(graph):
    """An import cycle of ``graph`` (module -> imported modules) as a path, or None."""
    state: dict[str, str] = {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return [*path, module, target]
            if target not in state and (found := visit(target, [*path, module])):
                return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module, [])):
            return found
    return None


def test_import_graph_has_no_cycle():
    graph = {m: {t for t in _imports(m)[0] if t != m} for m in MODULES}
    # the package's __init__ gathers the public API: nothing inside may import it back
    importers_of_root = sorted(m for m, targets in graph.items() if "eigenvision" in targets)
    assert importers_of_root == []
    assert _cycle(graph) is None


def test_the_walker_sees_the_old_hidden_cycle():
    """The cycle the issue found (dask_engine -> eigenspace inside a function, eigenspace ->
    dask_engine at the top) is seen once function-level imports count, and is a cycle."""
    inner = ast.parse("def f():\n    from .eigenspace import Eigenspace\n").body[0].body[0]
    assert _resolve("eigenvision.dask_engine", inner) == ["eigenvision.eigenspace"]
    graph = {
        "eigenvision.eigenspace": {"eigenvision.dask_engine"},
        "eigenvision.dask_engine": {"eigenvision.eigenspace"},
    }
    assert _cycle(graph) == [
        "eigenvision.dask_engine",
        "eigenvision.eigenspace",
        "eigenvision.dask_engine",
    ]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_only_plot_imports_matplotlib_and_only_the_app_streamlit():
    for module, path in MODULES.items():
        text = path.read_text()
        if module != "eigenvision.plot":
            assert not re.search(r"^\s*(from|import) matplotlib", text, re.M), module
        assert not re.search(r"^\s*(from|import) streamlit", text, re.M), module


def test_only_the_learned_description_imports_dlib():
    """dlib is an optional extra (``eigenvision[deep]``): imported in ``identity/deep.py`` only
    (and by the experiments' peer), on first use, so the package works without it."""
    for module, path in MODULES.items():
        text = path.read_text()
        importing = re.search(r"^\s*(from|import) (dlib|face_recognition_models)", text, re.M)
        if module not in ("eigenvision.identity.deep", "eigenvision.experiments._dlib"):
            assert not importing, module
        else:  # inside functions, never at the top of the module
            assert not re.search(r"^(from|import) (dlib|face_recognition_models)", text, re.M)


def test_code_is_formatted_not_packed():
    """``ruff format`` formats the package: no ``# fmt: skip`` packs code to meet a size."""
    packed = {m: p.read_text().count("# fmt: skip") for m, p in MODULES.items()}
    assert sum(packed.values()) <= 10, {m: n for m, n in packed.items() if n}


def test_a_mixin_has_two_users_or_more():
    """A class composes fitted parts held as attributes; a mixin only where two or more classes
    share it (the identity model's descriptions are a FaceDescriber it holds, not a mixin)."""
    bases = [
        (node.name, base.id if isinstance(base, ast.Name) else getattr(base, "attr", ""))
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        for base in node.bases
    ]
    mixins = {
        node.name
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Mixin")
    }
    single = {m for m in mixins if sum(base == m for _, base in bases) < 2}
    assert single == set(), single


@pytest.mark.parametrize("name", ["FaceFinder", "IdentityModel"])
def test_the_models_users_meet_take_a_handful_of_parameters(name):
    """Issue 77: at most 12 each; the rest are their parts' (``set_params(search__...)``,
    ``set_params(describer__...)``)."""
    import eigenvision as ev

    params = getattr(ev, name)().get_params(deep=False)
    assert len(params) <= 12, sorted(params)


def test_the_photo_pipeline_composes_its_stages():
    """Issue 77: FaceFinder takes a handful of parameters and holds its stages as estimators,
    each with its parameters, state, fit and score in its stage's module, reached as
    ``set_params(search__...)``."""
    import eigenvision as ev
    from eigenvision.faces import appearance, candidates, decision

    stages = {
        "search": (candidates, candidates.CandidateSearch),
        "decision": (decision, decision.FaceDecision),
        "appearance": (appearance, appearance.AppearanceCheck),
    }
    finder = ev.FaceFinder(**{name: stage() for name, (_, stage) in stages.items()})
    for module, stage in stages.values():
        assert stage.__module__ == module.__name__
        assert hasattr(stage, "_params") and hasattr(stage, "_state") and hasattr(stage, "fit")
    finder.set_params(search__step=1.5, decision__n_clusters=3, appearance__gate=0.5)
    settings = (finder.search.step, finder.decision.n_clusters, finder.appearance.gate)
    assert settings == (1.5, 3, 0.5)


TESTS = Path(__file__).parent


def _test_file_of(module: str) -> Path | None:
    """The test file of a public module, where the tests mirror the package: ``eigenvision.a.b``
    is tested in ``tests/a/test_b.py`` (a package in ``tests/a/b/``)."""
    parts = module.split(".")[1:]
    folder = TESTS.joinpath(*parts[:-1])
    for place in (folder / f"test_{parts[-1]}.py", folder / parts[-1]):
        if place.exists():
            return place
    return None


def test_the_tests_mirror_the_package():
    """Nine public modules in ten or more have a test file of their name in the folder of
    their package, and no test file is named after a piece of work instead of the code."""
    public = [
        m
        for m in MODULES
        if m != "eigenvision"
        and not any(part.startswith("_") for part in m.split("."))
        and ".experiments." not in m
    ]
    untested = [m for m in public if _test_file_of(m) is None]
    assert len(untested) <= 0.1 * len(public), untested
    named = {p.stem.removeprefix("test_") for p in TESTS.rglob("test_*.py")}
    modules = {m.rsplit(".", 1)[-1].lstrip("_") for m in MODULES}
    whole = {"app", "architecture", "docs", "readme", "sklearn_compat"}  # beyond one module
    assert named <= modules | whole, sorted(named - modules - whole)


#: What resamples an image geometrically: SciPy's and scikit-image's interpolators, Pillow's
#: resampling filters (a JPEG's reduced decoding, ``draft``, is the reader's, not a resample).
RESAMPLERS = re.compile(
    r"map_coordinates|affine_transform|geometric_transform|ndimage\.(zoom|rotate|shift)\b"
    r"|from scipy\.ndimage import .*\b(zoom|rotate|shift)\b"
    r"|from skimage\.transform import .*\b(warp|rescale|resize|rotate|downscale_local_mean)\b"
    r"|skimage\.transform\.(warp|rescale|resize|rotate)\b"
    r"|Image\.Resampling|Image\.(BILINEAR|BICUBIC|LANCZOS)"
)


def test_geometric_resampling_only_in_transform():
    """Every resize, warp and bilinear sample goes through :mod:`eigenvision.transform`: one
    place says how an image is resampled (the experiments and their peers aside)."""
    found = [
        f"{module}: {line.strip()}"
        for module, path in MODULES.items()
        if module != "eigenvision.transform" and ".experiments" not in module
        for line in path.read_text().splitlines()
        if RESAMPLERS.search(line) and not line.lstrip().startswith("#")
    ]
    assert found == []


#: Base classes that are templates: subclasses in other modules fill in their hooks.
TEMPLATE_MODULES = {"eigenvision._base"}


def _private_reaches():
    """``(module, class, name)`` of each ``self._name`` a class's methods read that is defined
    in another module of the package (other than a template base): a class spread over files."""
    found = set()
    for module, path in MODULES.items():
        if module.endswith("__main__"):
            continue
        loaded = importlib.import_module(module)
        for node in ast.parse(path.read_text()).body:
            cls = getattr(loaded, getattr(node, "name", ""), None)
            if not (isinstance(node, ast.ClassDef) and inspect.isclass(cls)):
                continue
            for access in ast.walk(node):
                if not (
                    isinstance(access, ast.Attribute)
                    and isinstance(access.value, ast.Name)
                    and access.value.id == "self"
                    and access.attr.startswith("_")
                    and not access.attr.startswith("__")
                ):
                    continue
                owner = next((k for k in cls.__mro__ if access.attr in vars(k)), None)
                if owner is None or not owner.__module__.startswith("eigenvision"):
                    continue
                if owner.__module__ not in (module, *TEMPLATE_MODULES):
                    found.add((module, node.name, access.attr))
    return found


def test_no_class_reaches_another_modules_private_definitions():
    """A class's methods read private definitions of its own module (or of a template base):
    ``Recognizer`` was one class spread over four files with 22 private calls between them."""
    assert _private_reaches() == set()


def test_no_module_imports_another_modules_private_names():
    """A name one module's code needs from another is public there (a private module, such as
    ``_fetch``, may be imported whole)."""
    found = []
    for module in MODULES:
        for node in ast.walk(ast.parse(MODULES[module].read_text())):
            if not (isinstance(node, ast.ImportFrom) and _resolve(module, node)):
                continue
            modules = {target.rsplit(".", 1)[-1] for target in _resolve(module, node)}
            found += [
                f"{module}: {alias.name}"
                for alias in node.names
                if alias.name.startswith("_")
                and not alias.name.startswith("__")
                and alias.name not in modules
            ]
    assert found == []


def test_no_measured_percentages_in_comments_or_docstrings():
    """Measured results live in results.json, the docs and HISTORY.md: a percentage in a
    comment or docstring is a measurement that will go stale (an f-string's is a message)."""
    measured = re.compile(r"\d(\.\d+)? ?%")
    found = []
    for module, path in MODULES.items():
        if ".experiments" in module:
            continue
        tree = ast.parse(path.read_text())
        texts = [
            ast.get_docstring(node) or ""
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        ]
        texts += [line.split("#", 1)[1] for line in path.read_text().splitlines() if "#" in line]
        found += [f"{module}: {text.strip()[:60]}" for text in texts if measured.search(text)]
    assert not found, found


def test_import_eigenvision_loads_no_heavy_library():
    """``import eigenvision`` imports its submodules on first use (lazy_loader): scikit-learn,
    scikit-image, matplotlib and Dask load only when a part that needs them is used."""
    code = (
        "import sys, eigenvision as ev; heavy = ('sklearn', 'skimage', 'matplotlib', 'dask');"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy));"
        "ev.Eigenspace; print('sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]


def _heavy_libraries_after(argv) -> list:
    """The heavy libraries a fresh process has imported after ``eigenvision <argv>``."""
    code = (
        "import sys, contextlib, io\n"
        "from eigenvision.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try: main({list(argv)!r})\n"
        "    except SystemExit: pass\n"
        "heavy = ('sklearn', 'skimage', 'matplotlib', 'dask', 'scipy')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_command_lines_help_loads_no_heavy_library():
    """``eigenvision --help`` names every command without importing their libraries; each
    command the help names has its options and its work."""
    from eigenvision import cli

    assert _heavy_libraries_after(["--help"]) == "[]"
    for name in cli.COMMANDS:
        module = cli.command_module(name)
        assert callable(module.options) and callable(module.run), name


def test_a_commands_help_loads_only_that_commands_libraries():
    """Regression (hardening round 4): ``eigenvision fetch --help`` took seconds: one module held
    every command and imported scikit-learn, scikit-image, SciPy and matplotlib for each."""
    assert _heavy_libraries_after(["fetch", "--help"]) == "[]"


def test_every_lazy_name_resolves():
    """Each name ``__all__`` promises (lazily) is there, and ``dir`` lists it."""
    for name in eigenvision.__all__:
        assert getattr(eigenvision, name) is not None, name
    assert set(eigenvision.__all__) <= set(dir(eigenvision))


def _public_callables():
    """Every function, class and public method that a module's ``__all__`` names."""
    seen = set()
    for module_name in sorted(MODULES):
        if module_name.endswith("__main__") or ".experiments" in module_name:
            continue
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if id(value) in seen or getattr(value, "__module__", "").split(".")[0] != "eigenvision":
                continue
            seen.add(id(value))
            yield from _with_methods(f"{module_name}.{name}", value)


def _with_methods(name, value):
    if inspect.isfunction(value):
        yield name, value
    elif inspect.isclass(value) and not issubclass(value, Exception):
        yield name, value
        for attribute, member in vars(value).items():
            if attribute.startswith("_") or not inspect.isfunction(member):
                continue
            yield f"{name}.{attribute}", member


@pytest.mark.parametrize("name, value", list(_public_callables()), ids=lambda v: str(v))
def test_public_api_documents_parameters_and_returns(name, value):
    doc = inspect.getdoc(value) or ""
    assert doc, f"{name} has no docstring"
    sections = ["Parameters"]
    if inspect.isclass(value):
        signature = inspect.signature(value.__init__)
        # a mixin (no __init__ of its own) takes no parameters
        wants_parameters = value.__init__ is not object.__init__ and len(signature.parameters) > 1
        wants_returns = False
        sections.append("Attributes")  # a result's fields
    else:
        signature = inspect.signature(value)
        wants_parameters = any(p not in ("self", "cls") for p in signature.parameters)
        wants_returns = True
    if wants_parameters:
        assert any(f"{section}\n----------" in doc for section in sections), (
            f"{name} lacks a Parameters section"
        )
    if wants_returns:
        assert re.search(r"Returns\n-------|Yields\n------", doc), f"{name} lacks a Returns section"
