"""Declarations of a model's parameters and fitted state, and the one check that reads them.

Each estimator declares, beside its ``__init__``, two small tables:
``_params`` (each parameter's kind and range: :class:`Param`) and
``_state`` (each fitted member's kind, dtype, shape rule and finiteness:
:class:`State`). ``fit`` checks the parameters with :func:`check_params`;
:func:`~eigenvision.load` checks both, so a model file whose member is
missing, unexpected, of another kind (strings or integers where floats
belong), non-finite or of an inconsistent shape is refused naming that
member; the command line and the app read the same tables for their choices.

Shape rules name their dimensions: ``("k", "d")`` beside ``("d",)`` says
both members share ``d``; integer members may bind a dimension too
(``n_components_`` binds ``k``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np

__all__ = [
    "MAGNITUDE",
    "Param",
    "State",
    "check_arguments",
    "check_params",
    "check_declared_state",
    "MissingMemberError",
    "INPUT_STATE",
]


#: The largest magnitude a fitted float member may hold unless it declares another: the square
#: root of float64's largest value, so that squares and products of members stay finite.
MAGNITUDE = 1e150


class MissingMemberError(ValueError):
    """A fitted model lacks a member its ``_state`` requires (e.g. a file of another version)."""


#: What a parameter kind accepts, for messages.
_KIND_WORDS = {
    "int": "an int",
    "real": "a number",
    "bool": "True or False",
    "shape": "(height, width) ints",
    "reals": "a sequence of numbers",
    "model": "a model",
    "any": "anything",
}


@dataclass(frozen=True)
class Param:
    """A parameter's kind and range.

    Parameters
    ----------
    kind : {"int", "real", "bool", "choice", "shape", "reals", "model", "any"}
        ``"reals"``: a sequence of numbers (its length in ``[min_length, max_length]``,
        each in the range); ``"shape"``: two positive ints.
    low, high : float, optional
        The range of a number (or of each number of ``"reals"``, each side of ``"shape"``).
    open_low, open_high : bool, default False
        Whether ``low`` and ``high`` themselves are excluded.
    optional : bool, default False
        None is allowed.
    choices : tuple, default ()
        The values of ``"choice"``.
    min_length, max_length : int, default 1 and 64
        The length of ``"reals"``.
    also : tuple, default ()
        Other values allowed besides the kind (e.g. ``"auto"`` beside numbers).
    sequence : bool, default False
        A tuple or list of ``min_length`` to ``max_length`` values of the kind
        (not of ``also``) is allowed too, one per item of something.
    fraction : bool, default False
        A number in the open interval (0, 1) is allowed too (``n_components``
        as a share of the variance, beside a count).
    needs : tuple of str, default ()
        A ``"model"`` given by what it does: the attributes it must have
        (default: an estimator's ``get_params``).
    """

    kind: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    optional: bool = False
    choices: tuple = ()
    min_length: int = 1
    max_length: int = 64
    also: tuple = ()
    needs: tuple = ()
    sequence: bool = False
    fraction: bool = False

    def describe(self) -> str:
        """What the parameter accepts, in words.

        Returns
        -------
        str
        """
        if self.kind == "choice":
            words = f"one of {self.choices}"
        elif self.kind == "model" and self.needs:
            words = "an object with " + ", ".join(self.needs)
        else:
            words = _KIND_WORDS[self.kind]
            if self.kind == "reals":
                words = f"{self.min_length}-{self.max_length} numbers"
            if self.low is not None or self.high is not None:
                left = "(" if self.open_low else "["
                right = ")" if self.open_high else "]"
                low = "-inf" if self.low is None else f"{self.low:g}"
                high = "inf" if self.high is None else f"{self.high:g}"
                words += f" in {left}{low}, {high}{right}"
        if self.fraction:
            words += " or a fraction in (0, 1)"
        if self.also:
            words += " or " + " or ".join(repr(v) for v in self.also)
        if self.sequence:
            words += f" or a sequence of {self.min_length}-{self.max_length} of them"
        return words + (" or None" if self.optional else "")

    def _in_range(self, value) -> bool:
        if not np.isfinite(value) and not (
            self.high is None and value == np.inf and self.kind == "real"
        ):
            return False
        if self.low is not None and (value < self.low or (self.open_low and value == self.low)):
            return False
        return not (
            self.high is not None and (value > self.high or (self.open_high and value == self.high))
        )

    def accepts(self, value) -> bool:
        """Whether ``value`` is of this kind and within range.

        Parameters
        ----------
        value : object

        Returns
        -------
        bool
        """
        if self.kind == "any":
            return True
        if value is None:
            return self.optional
        if any(value is v or (type(value) is type(v) and value == v) for v in self.also):
            return True
        if self.sequence and isinstance(value, (tuple, list)):
            one = replace(self, sequence=False, also=(), optional=False)
            if self.kind != "reals" or not one.accepts(value):  # "reals": itself a sequence
                return self.min_length <= len(value) <= self.max_length and all(
                    one.accepts(v) for v in value
                )
        if (
            self.fraction
            and isinstance(value, Real)
            and not isinstance(value, (Integral, np.bool_))
            and 0.0 < value < 1.0
        ):
            return True
        kind = self.kind
        if kind == "bool":
            return isinstance(value, (bool, np.bool_))
        if isinstance(value, (bool, np.bool_)):
            return False
        if kind == "int":
            return isinstance(value, Integral) and self._in_range(value)
        if kind == "real":
            return isinstance(value, Real) and self._in_range(float(value))
        if kind == "choice":
            return isinstance(value, (str, Integral)) and value in self.choices
        if kind == "shape":
            return (
                isinstance(value, (tuple, list))
                and len(value) == 2
                and all(
                    isinstance(v, Integral) and not isinstance(v, bool) and self._in_range(v)
                    for v in value
                )
            )
        if kind == "reals":
            if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
                return False
            if not self.min_length <= len(value) <= self.max_length:
                return False
            return all(
                isinstance(v, Real) and not isinstance(v, bool) and self._in_range(float(v))
                for v in value
            )
        if kind == "model":
            return all(hasattr(value, name) for name in self.needs or ("get_params",))
        raise ValueError(f"unknown parameter kind {kind!r}")


def check_params(model) -> None:
    """Raise ``ValueError`` naming the first parameter outside its declaration.

    Parameters
    ----------
    model : estimator
        With a ``_params`` table.

    Returns
    -------
    None

    Examples
    --------
    >>> class Model:
    ...     _params = {"k": Param("int", 1, 64)}
    ...     k = 0
    >>> check_params(Model())
    Traceback (most recent call last):
    ...
    ValueError: Model.k must be an int in [1, 64], got 0
    """
    for name, param in type(model)._params.items():
        value = getattr(model, name)
        if not param.accepts(value):
            raise ValueError(
                f"{type(model).__name__}.{name} must be {param.describe()}, got {value!r}"
            )


def check_arguments(function: str, **arguments) -> None:
    """Raise ``ValueError`` naming the first argument outside its declaration.

    The functions' counterpart of :func:`check_params`: the same
    :class:`Param` declarations, so a function's options are checked
    the way an estimator's parameters are.

    Parameters
    ----------
    function : str
        The function's name, for messages.
    **arguments : (value, Param) pairs
        Each argument's value and declaration.

    Returns
    -------
    None

    Examples
    --------
    >>> check_arguments("detect", overlap=(float("nan"), Param("real", 0, 1)))
    Traceback (most recent call last):
    ...
    ValueError: detect: overlap must be a number in [0, 1], got nan
    """
    for name, (value, param) in arguments.items():
        if not param.accepts(value):
            raise ValueError(f"{function}: {name} must be {param.describe()}, got {value!r}")


@dataclass(frozen=True)
class State:
    """A fitted member's kind, dtype, shape rule and finiteness.

    Parameters
    ----------
    kind : {"array", "int", "real", "reals", "str", "shape", "strings", "model", "models"}
        ``"array"``: an ndarray; ``"int"`` and ``"real"``: a Python number
        (``"reals"``: a list of them);
        ``"shape"``: an ``(H, W)`` tuple of ints; ``"strings"``: a tuple of
        str; ``"model"``: a fitted model; ``"models"``: a dict of fitted models.
    dtypes : str, default "f"
        The dtype kinds an array may have (``"f"`` floating, ``"iu"``
        integers, ``"U"`` strings, ``"b"`` bool, ``"biufU"`` labels).
    shape : tuple of (int or str), default ()
        An array's shape: a number, or a name that must mean the same length
        in every member of the model (``"*"``: any length).
    dim : str, optional
        An ``"int"`` member that fixes a dimension (``n_components_`` fixes ``"k"``).
    finite : {True, False, "posinf"}, default True
        Float values must be finite; ``"posinf"`` allows ``+inf``; False: any.
    low : float, optional
        Every value at least this.
    optional : bool, default False
        The member may be missing or None.
    magnitude : float, default :data:`MAGNITUDE`
        Every finite value within ``[-magnitude, magnitude]``: a value that
        squares to infinity (1e200) turns the model's answers into NaN or
        infinity without being infinite itself. Members of a known scale (a
        calibrated threshold, a weight) declare a tighter bound.
    positive : bool, default False
        Every value above zero: variances and scales the model divides by.
    positive_definite : bool, default False
        A covariance matrix: square, symmetric, with a Cholesky factorisation.
        A zero or indefinite one would fail or divide by zero when the model scores.
    """

    kind: str = "array"
    dtypes: str = "f"
    shape: tuple = ()
    dim: str | None = None
    finite: bool | str = True
    low: float | None = None
    optional: bool = False
    magnitude: float = MAGNITUDE
    positive: bool = False
    positive_definite: bool = False


def _check_member(owner, name, state, value, dims):
    """Raise ``ValueError`` if one member breaks its declaration; bind its dimensions."""
    where = f"{owner}.{name}"
    kind = state.kind
    if kind == "array":
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{where} must be an array, got {type(value).__name__}")
        if value.dtype.kind not in state.dtypes:
            raise ValueError(f"{where} has dtype {value.dtype}; expected kind {state.dtypes!r}")
        if value.ndim != len(state.shape):
            raise ValueError(f"{where} has {value.ndim} dimensions, expected {len(state.shape)}")
        for axis, (length, rule) in enumerate(zip(value.shape, state.shape, strict=True)):
            if isinstance(rule, int) and length != rule:
                raise ValueError(f"{where} has {length} along axis {axis}, expected {rule}")
            if isinstance(rule, str) and rule != "*":
                if dims.setdefault(rule, length) != length:
                    raise ValueError(
                        f"{where} has {length} along axis {axis} where the model's other "
                        f"members give {dims[rule]} ({rule})"
                    )
        values = value
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise ValueError(f"{where} must be an int, got {value!r}")
        if state.dim and dims.setdefault(state.dim, int(value)) != value:
            raise ValueError(f"{where}={value} where the arrays give {dims[state.dim]}")
        values = np.array([value])
    elif kind == "real":
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ValueError(f"{where} must be a number, got {value!r}")
        values = np.array([float(value)])
    elif kind == "reals":
        if not (
            isinstance(value, (list, tuple))
            and all(isinstance(v, Real) and not isinstance(v, bool) for v in value)
        ):
            raise ValueError(f"{where} must be a list of numbers, got {type(value).__name__}")
        values = np.array(value, dtype=np.float64)
    elif kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"{where} must be a string, got {value!r}")
        return
    elif kind == "shape":
        if not (
            isinstance(value, tuple)
            and len(value) == 2
            and all(isinstance(v, Integral) and not isinstance(v, bool) and v >= 1 for v in value)
        ):
            raise ValueError(f"{where} must be an (H, W) tuple of positive ints, got {value!r}")
        return
    elif kind == "strings":
        if not (isinstance(value, tuple) and all(isinstance(v, str) for v in value)):
            raise ValueError(f"{where} must be a tuple of strings, got {value!r}")
        return
    elif kind == "model":
        if not hasattr(value, "get_params"):
            raise ValueError(f"{where} must be a fitted model, got {type(value).__name__}")
        return
    elif kind == "models":
        if not (isinstance(value, dict) and all(hasattr(v, "get_params") for v in value.values())):
            raise ValueError(f"{where} must be a dictionary of fitted models")
        return
    else:
        raise ValueError(f"unknown state kind {kind!r}")
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if state.finite == "posinf":
            finite |= np.isposinf(values)
        if state.finite and not np.all(finite):
            raise ValueError(f"{where} holds NaN or infinite values")
    if state.low is not None and values.size and np.nanmin(values) < state.low:
        raise ValueError(f"{where} holds values below {state.low:g}")
    if values.dtype.kind == "f" and values.size:
        finite_values = values[np.isfinite(values)]
        if finite_values.size and float(np.abs(finite_values).max()) > state.magnitude:
            raise ValueError(
                f"{where} holds values beyond {state.magnitude:g} in magnitude "
                f"({np.abs(finite_values).max():.3g}); such a model answers NaN or infinity"
            )
    if state.positive and values.size and not np.all(values > 0):
        raise ValueError(f"{where} must be positive (the model divides by it), and is not")
    if state.positive_definite and not _positive_definite(values):
        raise ValueError(f"{where} must be a symmetric positive definite matrix (a covariance)")


def _positive_definite(matrix) -> bool:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        return False
    if not np.allclose(matrix, matrix.T, rtol=1e-6, atol=0):
        return False
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def check_declared_state(model) -> None:
    """Raise ``ValueError`` naming the first fitted member that breaks the model's ``_state``.

    A member the table does not declare, or a required one that is missing,
    is refused too.

    Parameters
    ----------
    model : fitted estimator
        With a ``_state`` table.

    Returns
    -------
    None

    Examples
    --------
    >>> class Model:
    ...     _state = {"mean_": State(shape=("d",)), "components_": State(shape=("k", "d"))}
    >>> model = Model()
    >>> model.mean_, model.components_ = np.zeros(3), np.zeros((2, 4))
    >>> check_declared_state(model)
    Traceback (most recent call last):
    ...
    ValueError: Model.components_ has 4 along axis 1 where the model's other members give 3 (d)
    """
    owner = type(model).__name__
    table = type(model)._state
    fitted = {k for k in vars(model) if k.endswith("_") and not k.startswith("_")}
    unexpected = sorted(fitted - set(table))
    if unexpected:
        raise ValueError(f"{owner} has unexpected members {unexpected}")
    dims: dict = {}
    for name, state in table.items():
        value = getattr(model, name, None)
        if value is None:
            if state.optional:
                continue
            raise MissingMemberError(f"{owner}.{name} is missing")
        _check_member(owner, name, state, value, dims)


#: The members every model fitted on images or rows records of its input (``n_features_in_``,
#: and ``image_shape_`` when it was given images): the start of their ``_state`` tables.
INPUT_STATE = {
    "n_features_in_": State("int", dim="d", low=1),
    "image_shape_": State("shape", optional=True),
}


#: Bounds on sizes a model file may declare: an image side of its ``image_shape_``.
LIMITS = {"side": 4096}


def check_model(model) -> None:
    """Raise ``ValueError`` naming the first inconsistency of a fitted model.

    Its parameters (``_params``), each fitted member against ``_state``, its
    ``image_shape_`` against its features, then the relations between
    members that no single declaration states, which each model checks
    itself (``_check_relations``, into the models it holds).

    Parameters
    ----------
    model : fitted estimator

    Returns
    -------
    None
    """
    if hasattr(type(model), "_params"):
        check_params(model)
    check_declared_state(model)  # every savable class declares its state
    features = getattr(model, "n_features_in_", None)
    shape = getattr(model, "image_shape_", None)
    if features is not None and shape is not None:
        name = type(model).__name__
        if int(np.prod(check_sides(tuple(shape), f"{name}.image_shape_", 2))) != features:
            raise ValueError(f"{name}: image_shape_ {shape} does not hold its {features} features")
    relations = getattr(model, "_check_relations", None)
    if relations is not None:
        relations()


def check_sides(value, name, length=None) -> tuple:
    """``value``, a tuple of ``length`` image sides in ``[1, LIMITS["side"]]``, or ``ValueError``.

    Parameters
    ----------
    value : tuple
    name : str
        How the error names it.
    length : int, optional

    Returns
    -------
    tuple
    """
    sides_ok = all(isinstance(v, Integral) and 1 <= v <= LIMITS["side"] for v in value)
    if not (isinstance(value, tuple) and (length is None or len(value) == length) and sides_ok):
        raise ValueError(
            f"{name} must be {length or 'some'} ints in [1, {LIMITS['side']}], got {value!r}"
        )
    return value


def check_eight_bits(model, member, scale_member) -> None:
    """An integer ``member`` is int8 with its ``scale_member``
    (:func:`~eigenvision.identity.quantized`); a float one has none.

    Parameters
    ----------
    model : fitted estimator
    member, scale_member : str

    Returns
    -------
    None
    """
    name = type(model).__name__
    values, scale = getattr(model, member, None), getattr(model, scale_member, None)
    if values is None or values.dtype.kind == "f":
        if scale is not None:
            raise ValueError(f"{name}.{scale_member} scales an 8-bit {member}, the file's is float")
        return
    if values.dtype != np.int8 or scale is None:
        raise ValueError(
            f"{name}.{member} is {values.dtype}: integers must be int8 with their "
            f"{scale_member} (eigenvision.identity.quantized writes both); the file is damaged"
        )
