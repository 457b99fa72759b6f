"""Validation and helpers shared by every subspace model."""

from __future__ import annotations

import copy
import threading
import weakref
from collections import OrderedDict

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
from sklearn.utils.validation import assert_all_finite, validate_data

from ._errors import EigenvisionError
from ._progress import progress  # noqa: F401 - the name the package imports from here
from ._spec import check_params
from .imageset import ImageSet, check_labels

FLOAT_DTYPES = (np.float64, np.float32)


def flatten_images(X):
    """Return ``(X_2d, image_shape)``: an ``(n, H, W)`` stack or ImageSet becomes ``(n, H*W)``."""
    if isinstance(X, ImageSet):
        X = X.images
    if hasattr(X, "ndim") and X.ndim == 3:
        X = np.asarray(X)
        return X.reshape(len(X), X.shape[1] * X.shape[2]), tuple(X.shape[1:])
    return X, None


_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


def kept_on(owner, name, inputs, make):
    """``make()``, kept for ``owner`` under ``name`` while its inputs stay the same objects.

    For values derived from a fitted model's arrays (a map multiplied out, a
    basis solved): they are made again when an input is replaced (a refit,
    a loaded file, a copy given another array), never checked element by
    element. Numbers count as the same when equal. The values are kept
    beside the model (a weak reference to it), not in its ``__dict__``: a
    model's state changes only in ``fit`` (scikit-learn's
    ``check_dict_unchanged``), and copies, pickles and model files do not
    carry them.

    Parameters
    ----------
    owner : object
        Whom the value is kept for (weakly referenced).
    name : str
        The value's name among the owner's kept values.
    inputs : tuple
        What the value is made from.
    make : callable
        ``make() -> value``.

    Returns
    -------
    object
        The kept value, or ``make()``'s.

    Examples
    --------
    >>> class Model:
    ...     pass
    >>> model, weights = Model(), np.ones(3)
    >>> kept_on(model, "total", (weights,), lambda: float(weights.sum()))
    3.0
    >>> kept_on(model, "total", (weights,), lambda: -1.0)  # the same array: kept
    3.0
    >>> kept_on(model, "total", (np.ones(3),), lambda: -1.0)  # another array: made again
    -1.0
    >>> vars(model)
    {}
    """
    with _KEPT_LOCK:
        kept = _KEPT.get(owner, {}).get(name)
    if kept is None or len(kept[0]) != len(inputs) or not all(map(_same, kept[0], inputs)):
        kept = (tuple(inputs), make())
        with _KEPT_LOCK:
            _KEPT.setdefault(owner, {})[name] = kept
    return kept[1]


def _same(a, b) -> bool:
    """The same object, or equal numbers."""
    if a is b:
        return True
    numbers = (int, float, np.integer, np.floating)
    return isinstance(a, numbers) and isinstance(b, numbers) and a == b


def is_dask_array(X) -> bool:
    """True for a ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.array")


class BoundedCache:
    """A least-recently-used cache bounded by the bytes of its values.

    Thread-safe (a process-wide one calls :meth:`after_fork` in a forked
    child). A value larger than the bound is computed and returned but not
    kept.

    Parameters
    ----------
    max_bytes : int
        The most bytes kept at once.
    sizeof : callable, optional
        ``sizeof(value) -> int`` bytes; default ``value.nbytes``.
    min_requests : int, default 1
        A value is kept from its key's ``min_requests``-th request on (the
        hashes of the last ``4 * 1024`` keys asked for are remembered): with
        2, values asked for once are computed, returned and dropped, and
        never displace the ones that are asked for again.

    Examples
    --------
    >>> cache = BoundedCache(max_bytes=16)
    >>> cache.get("a", lambda: np.zeros(2)).nbytes, len(cache)
    (16, 1)
    >>> _ = cache.get("b", lambda: np.zeros(2)); len(cache)  # "a" is evicted
    1
    >>> second = BoundedCache(max_bytes=16, min_requests=2)
    >>> _ = second.get("a", lambda: np.zeros(2)); len(second)  # asked for once: not kept
    0
    >>> _ = second.get("a", lambda: np.zeros(2)); len(second)
    1
    """

    _REQUESTS_REMEMBERED = 4 * 1024

    def __init__(self, max_bytes: int, sizeof=None, *, min_requests: int = 1):
        self.max_bytes = int(max_bytes)
        self.sizeof = sizeof or (lambda value: int(getattr(value, "nbytes", 0)))
        self.min_requests = int(min_requests)
        self._entries: OrderedDict = OrderedDict()
        self._requests: OrderedDict = OrderedDict()  # hash(key) -> requests so far, not kept
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"BoundedCache(max_bytes={self.max_bytes}, entries={len(self)}, bytes={self._bytes})"

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def clear(self) -> None:
        """Drop every value kept, and the requests counted."""
        with self._lock:
            self._entries.clear()
            self._requests.clear()
            self._bytes = 0

    def after_fork(self) -> None:
        """A fresh lock for a forked child's copy (``os.register_at_fork``): the parent's may
        have been held by a thread the child does not have."""
        self._lock = threading.Lock()

    def _wanted(self, key) -> bool:
        """Count a request for ``key`` (not kept); True once it is worth keeping. Under the
        lock."""
        if self.min_requests <= 1:
            return True
        digest = hash(key)  # a collision only keeps a value early
        count = self._requests.pop(digest, 0) + 1
        if count >= self.min_requests:
            return True
        self._requests[digest] = count
        if len(self._requests) > self._REQUESTS_REMEMBERED:
            self._requests.popitem(last=False)
        return False

    def get(self, key, compute):
        """The value cached under ``key``, else ``compute()`` (kept if it fits).

        Parameters
        ----------
        key : hashable
        compute : callable
            ``compute() -> ndarray``, called without the lock held.

        Returns
        -------
        ndarray
        """
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key][0]
            wanted = self._wanted(key)
        value = compute()
        size = self.sizeof(value)
        if size > self.max_bytes or not wanted:
            return value
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (value, size)
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return value


def cloned_sharing(estimator, shared):
    """An unfitted copy of ``estimator`` whose parameters are cloned, except those named in
    ``shared``: fitted resources it reads and never refits (a detector, a finder, a trained
    identity model), which the copy shares. For ``__sklearn_clone__``.

    Parameters
    ----------
    estimator : BaseEstimator
    shared : iterable of str
        Parameter names kept as they are.

    Returns
    -------
    BaseEstimator
        Of ``estimator``'s class.
    """
    shared = set(shared)
    params = estimator.get_params(deep=False)
    return type(estimator)(
        **{k: v if k in shared else clone(v, safe=False) for k, v in params.items()}
    )


def copied_with_parts(model, parts):
    """A shallow copy of ``model`` whose parts (estimators it holds as parameters and fits in
    place, as a pipeline holds its steps) are shallow copies too: setting a parameter of the
    copy or of its parts (``set_params(part__name=...)``) changes no other model, and the
    fitted arrays stay shared. For ``__copy__``.

    Parameters
    ----------
    model : BaseEstimator
    parts : iterable of str
        Parameter names of the parts (None ones left as they are).

    Returns
    -------
    BaseEstimator
        Of ``model``'s class.
    """
    new = type(model).__new__(type(model))
    new.__dict__.update(model.__dict__)
    for name in parts:
        if getattr(model, name) is not None:
            setattr(new, name, copy.copy(getattr(model, name)))
    return new


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun in the number it takes: "1 person", "2 people", "0 faces".

    Parameters
    ----------
    count : int
    singular : str
    plural : str, optional
        Default ``singular + "s"``.

    Returns
    -------
    str

    Examples
    --------
    >>> counted(1, "person", "people"), counted(2, "person", "people"), counted(0, "face")
    ('1 person', '2 people', '0 faces')
    """
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def format_below(value: float, limit: float, digits: int = 3) -> str:
    """``value`` with the fewest decimals (``digits`` at least) that still read as below ``limit``.

    A probability of 0.99996 under a threshold of 1 printed with three
    decimals reads "1.000": as many decimals as it takes to tell them apart.

    Parameters
    ----------
    value, limit : float
        ``value < limit``.
    digits : int, default 3

    Returns
    -------
    str

    Examples
    --------
    >>> format_below(0.42, 0.9), format_below(0.99996, 1.0), format_below(0.9509, 0.951)
    ('0.420', '0.99996', '0.9509')
    """
    for places in range(digits, 17):
        text = f"{value:.{places}f}"
        if float(text) < limit:
            return text
    return repr(float(value))


class NotFittedError(EigenvisionError, _SklearnNotFittedError):
    """A model was used before ``fit``.

    Subclasses scikit-learn's ``NotFittedError`` (itself a ``ValueError``
    and an ``AttributeError``), so ``except sklearn.exceptions.NotFittedError``
    and scikit-learn's checks recognise it.
    """


def check_fitted(model, attribute: str = "components_") -> None:
    if not hasattr(model, attribute):
        raise NotFittedError(
            f"this {type(model).__name__} is not fitted yet; call fit(X) before using it"
        )


class SubspaceModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base of the fit/transform models: input validation for images and flattened data."""

    def _validate_fit(self, X, y=None, *, allow_nan: bool = False, ensure_min_samples: int = 2):
        """Check the parameters, then validate training data; with ``y`` return ``(X, y)``."""
        check_params(self)
        X, image_shape = flatten_images(X)
        options = dict(
            dtype=list(FLOAT_DTYPES),
            ensure_min_samples=ensure_min_samples,
            ensure_all_finite="allow-nan" if allow_nan else True,
        )
        if y is None:
            result = validate_data(self, X, **options)
        else:
            result = validate_data(self, X, y, y_numeric=False, **options)
        self.image_shape_ = image_shape
        return result

    def _validate_transform(self, X, *, allow_nan: bool = False, check_finite: bool = True):
        """Validate data to project; ``check_finite=False`` leaves NaN/inf to :meth:`_project`."""
        check_fitted(self, "n_features_in_")
        X, image_shape = flatten_images(X)
        expected = getattr(self, "image_shape_", None)
        if image_shape is not None and expected is not None and image_shape != expected:
            raise ValueError(
                f"image shape {image_shape} does not match the {type(self).__name__}'s "
                f"{expected}; call normalize_images(images, shape={expected}) first"
            )
        return validate_data(
            self,
            X,
            dtype=list(FLOAT_DTYPES),
            reset=False,
            ensure_all_finite="allow-nan" if allow_nan else check_finite,
        )

    def _project(self, X, components=None):
        """``(X - mean_, (X - mean_) @ components.T)`` of validated ``X`` (default ``components_``).

        Finiteness is checked on the codes rather than the input: a NaN or
        infinite pixel makes its row's codes NaN or infinite (IEEE arithmetic
        propagates it through every product and sum), and the ``(n, k)``
        codes are cheaper to scan than the ``(n, d)`` data (the scan was
        half of a fast predict's time). Pixels where a component is
        exactly zero are checked directly: some BLAS builds skip zero terms, so
        ``inf * 0`` need not reach the codes. Only on failure is the whole
        input scanned, for the exact message.
        """
        X = self._validate_transform(X, check_finite=False)
        components = self.components_ if components is None else components
        blind = np.flatnonzero(~np.all(components, axis=0))
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite input: refused below
            centred = X - self.mean_
            codes = centred @ components.T
            suspect = (
                codes.size == 0
                or not np.isfinite(codes.sum())
                or (blind.size > 0 and not np.isfinite(X[:, blind]).all())
            )
        if suspect:
            assert_all_finite(X, input_name="X")
            if not np.isfinite(codes).all():
                raise ValueError(
                    f"projecting X overflowed {codes.dtype} (its values reach "
                    f"{np.abs(X).max():.3g}); rescale the data, e.g. to [0, 1]"
                )
        return centred, codes

    def transform(self, X):
        """The codes of ``X``: ``(X - mean_) @ components_.T``; ``(n, d)`` -> ``(n, k)``.

        What the codes mean is each model's (its class description says).

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n, k) ndarray
        """
        check_fitted(self)
        return self._project(X)[1]

    @property
    def _n_features_out(self):
        return self.components_.shape[0]


class SupervisedSubspaceModel(SubspaceModel):
    """Base of the subspace models fitted on labelled data (Fisherfaces, Bayesian matching)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _validate_labelled(self, X, y):
        """``(X, classes, codes)``: validated data, its sorted classes, each row's class index.

        Refuses a missing ``y`` and fewer than two classes.
        """
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        X, y = self._validate_fit(X, check_labels(y))
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"{name} needs at least 2 classes (people), got {len(classes)}")
        return X, classes, codes
