"""`pypto.error`: PyPTO's exception classes (see docs/running_pypto_programs.md).

PyPTO reports a failed check inside a kernel (`pypto.function` or a jit kernel) as a `FeError`.
ptocpu raises its own classes (DTypeError, TileError, ...); inside kernels those become an
exception that is an instance of both, so `except pypto.error.FeError` and
`except ptocpu.TileError` (or `except ValueError`) catch the same error.
"""
from __future__ import annotations

import functools
import types
from typing import Callable, Optional, Union

__all__ = ["PyptoError", "PyptoGeneralError", "FeError", "PyptoRtError", "PassError", "VerifyError",
           "ParserError", "as_fe_error"]

# PyPTO's codes: 0xF00000 | the category (pypto_impl.ExternalError) of the Python exception class.
_CODES = {TypeError: 1, ValueError: 2, RuntimeError: 3, NameError: 4, NotImplementedError: 5, KeyError: 6,
          IndexError: 8}
_UNKNOWN = 0xF0FFFF


def _code(error: Union[str, BaseException]) -> int:
    if isinstance(error, BaseException):
        for cls in type(error).__mro__:
            if cls in _CODES:
                return 0xF00000 | _CODES[cls]
    return _UNKNOWN


class PyptoError(Exception):
    """The base of PyPTO's errors: an error code and a message led by "ErrCode: <hex>" (and the
    wrapped exception's class), unless the message already carries a code."""

    def __init__(self, err_code: int, msg: Union[str, BaseException]):
        text = str(msg)
        if "ErrCode" not in text:
            kind = f"{type(msg).__name__}: " if isinstance(msg, BaseException) else ""
            text = f"ErrCode: {err_code:X}, {kind}{text}"
        super().__init__(text)
        self.err_code = err_code


class CoreError(PyptoError):
    """The base of ptocpu's own errors (ptocpu.Error: DTypeError, ArgumentError, ...): PyptoErrors,
    as the checks at PyPTO's Python entry raise them, whose code is that of the builtin class each
    also is (ArgumentError: a ValueError, 0xF00002)."""

    def __init__(self, *args):
        Exception.__init__(self, *args)

    @property
    def err_code(self) -> int:
        return self.__dict__.get("_err_code", _code(self))

    @err_code.setter
    def err_code(self, value: int) -> None:
        self.__dict__["_err_code"] = value


class PyptoGeneralError(PyptoError):
    def __init__(self, msg: Union[str, BaseException]):
        super().__init__(_code(msg), msg)


class FeError(PyptoGeneralError):
    """A front-end error: a check that failed while a kernel was recorded or run."""


class PyptoRtError(PyptoGeneralError):
    """A runtime error."""


class PassError(PyptoGeneralError):
    """A pass configuration error."""


class VerifyError(PyptoGeneralError):
    """A verification error."""


class ParserError(PyptoError):
    def __init__(self, node, msg: Union[str, BaseException]):
        super().__init__(_code(msg), msg)
        self.node = node


def _catch_and_wrap_error(operation_name: str) -> Callable:
    """Decorator: an exception other than a PyptoError escaping the function becomes a
    PyptoGeneralError whose message says which operation on which function failed."""
    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except PyptoError:
                raise
            except Exception as e:
                target = getattr(args[0], "__name__", func.__name__) if args else func.__name__
                text = f"Failed to {operation_name} '{target}'.\n{e}"
                wrapped = PyptoGeneralError(text if "ErrCode" in str(e) else type(e)(text))
                raise wrapped.with_traceback(e.__traceback__) from None
        return wrapper
    return decorator


_combined: dict[tuple, type] = {}


def _copy_slots(source: BaseException, target: BaseException) -> None:
    """The attributes built-in exception classes keep outside __dict__ (an OSError's errno and
    filename, a UnicodeDecodeError's reason, a StopIteration's value), copied."""
    for klass in type(source).__mro__:
        for name, attr in vars(klass).items():
            if name.startswith("__") or name == "args" or not isinstance(
                    attr, (types.MemberDescriptorType, types.GetSetDescriptorType)):
                continue
            value = getattr(source, name, None)
            if value is None:  # unset (what a fresh exception holds too)
                continue
            try:
                setattr(target, name, value)
            except (AttributeError, TypeError, ValueError):  # read-only
                pass


def as_fe_error(error: BaseException, pypto_class: Optional[type] = None) -> BaseException:
    """`error` as an exception that is both a FeError (or pypto_class, e.g. PassError) and an
    instance of error's class: its
    arguments and attributes kept (an OSError's errno and filename, a StopIteration's value), the
    original chained as its __cause__. A PyptoError other than ptocpu's own is returned as it is, and so is a BaseException
    that is no Exception (KeyboardInterrupt, SystemExit): `except Exception` must not catch Ctrl-C."""
    pypto_class = pypto_class or FeError
    if not isinstance(error, Exception) or isinstance(error, pypto_class):
        return error
    if isinstance(error, PyptoError) and not isinstance(error, CoreError):  # ptocpu's own errors are converted
        return error
    cls = type(error)
    combined = _combined.get((cls, pypto_class))
    if combined is None:
        try:
            combined = type(cls.__name__, (cls, pypto_class),
                            {"__module__": cls.__module__, "__init__": Exception.__init__})
        except TypeError:  # an exception class that cannot be combined (layout conflict)
            combined = pypto_class
        _combined[(cls, pypto_class)] = combined
    if combined is pypto_class:
        converted = pypto_class(error)
    else:
        converted = combined.__new__(combined, *error.args)
        Exception.__init__(converted, *error.args)
        _copy_slots(error, converted)
        converted.__dict__.update(getattr(error, "__dict__", {}))
    converted.err_code = _code(error)
    converted.__traceback__ = error.__traceback__
    converted.__cause__ = error
    return converted
