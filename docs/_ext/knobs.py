"""``.. knobs:: FaceFinder``: a table of a model's parameters, its shipped value and what it
trades, the values read from the package when the docs are built (never typed into them).

Each line of the directive's content is ``parameter: what it trades``, a stage's parameter
named as ``set_params`` reaches it (``search__rotations``); the table's value columns come from
the shipped model (``eigenvision.default_finder()``) and the class's defaults (its stages'
defaults for a stage left None), so the page cannot disagree with the code.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

#: The shipped models the directive knows, by class name.
SHIPPED = {
    "FaceFinder": lambda ev: ev.default_finder(),
}

#: A model as its class's defaults make it, its stages made too (``fit`` makes a None one).
DEFAULTS = {
    "FaceFinder": lambda ev: ev.FaceFinder(
        search=ev.faces.CandidateSearch(),
        decision=ev.faces.FaceDecision(),
        appearance=ev.faces.AppearanceCheck(),
    ),
}


def _settings(model) -> dict:
    """Every setting of a model and of its stages (``stage__name``), the stages themselves not."""
    return {
        name: value
        for name, value in model.get_params(deep=True).items()
        if not hasattr(value, "get_params")
    }


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_shown(v) for v in value) + ")"
    return repr(value)


class Knobs(Directive):
    required_arguments = 1
    has_content = True

    def run(self):
        import eigenvision as ev

        name = self.arguments[0]
        shipped = _settings(SHIPPED[name](ev))
        defaults = _settings(DEFAULTS[name](ev))
        rows = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 22 12 12 54",
            "",
            "   * - parameter",
            "     - shipped",
            f"     - ``{name}()``",
            "     - what it trades",
        ]
        listed = [line.partition(":")[0].strip() for line in self.content]
        if sorted(listed) != sorted(shipped):
            unsaid = sorted(set(shipped) - set(listed)) or sorted(set(listed) - set(shipped))
            raise self.error(f"{name}'s table must list each parameter once: {unsaid}")
        for line in self.content:
            parameter, _, trade = line.partition(":")
            parameter = parameter.strip()
            if parameter not in shipped:
                raise self.error(f"{name} has no parameter {parameter!r}")
            rows += [
                f"   * - ``{parameter}``",
                f"     - ``{_shown(shipped[parameter])}``",
                f"     - ``{_shown(defaults[parameter])}``",
                f"     - {trade.strip()}",
            ]
        holder = nodes.section()
        holder.document = self.state.document
        self.state.nested_parse(StringList(rows), self.content_offset, holder)
        return holder.children


def setup(app):
    app.add_directive("knobs", Knobs)
    return {"parallel_read_safe": True}
