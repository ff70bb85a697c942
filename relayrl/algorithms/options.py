"""Config options, each defined once: an `Option` record and the table that derives the rest.

Builder methods (`config.training(...)`), value checks, dict keys, aliases, CLI parsing and
docstrings all come from the `Option` records, so adding an option is one declaration.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import json
import math
import numbers
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Mapping, Optional, Tuple, Union

from relayrl.core.suggest import did_you_mean


class _NotProvidedType:
    """Sentinel default of builder arguments: "leave this option as it is"."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NotProvided"

    def __reduce__(self):  # stays a singleton through pickle and deepcopy
        return (_NotProvidedType, ())


NotProvided = _NotProvidedType()


# Unknown words whose nearest spelling is not what their writers meant (RLlib ignores unknown keys in
# `overrides()` / `evaluation_config`, so such a slip went unnoticed there): `exploration=False` means `explore`.
_MEANT = {"exploration": "explore"}


def _suggest(word: str, names) -> str:
    meant = _MEANT.get(word)
    if meant is not None and meant in names:
        return f" Did you mean `{meant}`?"
    return did_you_mean(word, names)


class UnknownOptionError(KeyError, ValueError):
    """An unknown key in a config dict; both a KeyError and a ValueError so either `except` works."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


# -- value checks -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Check:
    """A value check: `allowed` completes the sentence "<option> must be ..."."""

    allowed: str
    test: Callable[[Any], bool]
    annotation: Any = Any  # type hint shown in builder signatures; a CLI may use it too
    normalize: Optional[Callable[[Any], Any]] = None  # canonical form stored after the check

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except Exception:  # a test that trips over an odd type means "not allowed"
            return False

    def apply(self, name: str, value: Any) -> Any:
        if not self.accepts(value):
            raise ValueError(f"{name} must be {self.allowed}, got {short_repr(value)}")
        return self.normalize(value) if self.normalize else value


def short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's bool too


def int_at_least(low: int) -> Check:
    allowed = "a positive int" if low == 1 else f"an int >= {low}"
    return Check(allowed, lambda v: is_int(v) and v >= low, int)


def float_at_least(low: float, *, strict: bool, allow_inf: bool = False) -> Check:
    if low == 0:
        allowed = "a positive float" if strict else "a float >= 0"
    else:
        allowed = f"a float {'>' if strict else '>='} {low}"
    if allow_inf:
        allowed += " (inf allowed)"

    def test(v):
        if not is_real(v) or math.isnan(v) or (not allow_inf and math.isinf(v)):
            return False
        return v > low if strict else v >= low

    return Check(allowed, test, float)


def float_between(low: float, high: float) -> Check:
    return Check(f"a float in [{low}, {high}]", lambda v: is_real(v) and low <= v <= high, float)


BOOL = Check("a bool", is_bool, bool)
POSITIVE_INT = int_at_least(1)
NON_NEGATIVE_INT = int_at_least(0)
POSITIVE_FLOAT = float_at_least(0, strict=True)
NON_NEGATIVE_FLOAT = float_at_least(0, strict=False)
FRACTION = float_between(0.0, 1.0)
DICT = Check("a dict", lambda v: isinstance(v, Mapping), dict)
CALLABLE_OR_NONE = Check("a callable or None", lambda v: v is None or callable(v), Optional[Callable])


def optional(check: Check) -> Check:
    normalize = check.normalize
    return Check(
        f"{check.allowed} or None",
        lambda v: v is None or check.accepts(v),
        Optional[check.annotation],
        (lambda v: v if v is None else normalize(v)) if normalize else None,
    )


def either(first: Check, second: Check) -> Check:
    def normalize(v):
        chosen = first if first.accepts(v) else second
        return chosen.normalize(v) if chosen.normalize else v

    return Check(
        f"{first.allowed} or {second.allowed}",
        lambda v: first.accepts(v) or second.accepts(v),
        Union[first.annotation, second.annotation],
        normalize if (first.normalize or second.normalize) else None,
    )


def one_of(*choices: str, ignore_case: bool = False) -> Check:
    """One of a few strings; with ignore_case also enum members whose value matches (stored upper)."""
    allowed = repr(choices[0]) if len(choices) == 1 else "one of " + ", ".join(map(repr, choices))

    def canonical(v):
        if ignore_case and isinstance(v, enum.Enum):
            v = v.value
        if not isinstance(v, str):
            return None
        for choice in choices:
            if v == choice or (ignore_case and v.lower() == choice.lower()):
                return choice
        return None

    return Check(allowed, lambda v: canonical(v) is not None, Literal[choices], canonical)


def schedule_or(check: Check, value_check: Check) -> Check:
    """A constant, or RLlib's piecewise-linear schedule [[timestep, value], ...] starting at t=0."""

    def is_schedule(v):
        if not isinstance(v, (list, tuple)) or not v:
            return False
        steps = []
        for pair in v:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                return False
            t, value = pair
            if not is_int(t) or not value_check.accepts(value):
                return False
            steps.append(t)
        return steps[0] == 0 and all(a < b for a, b in zip(steps, steps[1:]))

    return Check(
        f"{check.allowed} or a schedule [[timestep, value], ...] whose timesteps start at 0 and "
        f"increase and whose values are each {value_check.allowed}",
        lambda v: check.accepts(v) or is_schedule(v),
        Union[check.annotation, list],
    )


def only_default(default: Any, why: str) -> Check:
    """An option RLlib accepts that relayrl does not implement: only its default passes, and the error
    says why (`why` completes "... must be <default> (<why>)")."""
    return Check(f"{default!r} ({why})", lambda v: v == default and type(v) is type(default), type(default))


def is_search_space(value: Any) -> bool:
    """A Ray Tune search-space marker (resolved per trial by Tune, so not checked here)."""
    if isinstance(value, Mapping) and len(value) == 1 and "grid_search" in value:
        return True
    return type(value).__module__.startswith("ray.tune")


# -- the option record ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """One config option: everything about it is declared here, once."""

    name: str  # attribute and builder keyword
    default: Any
    help: str  # one line, shown in builder docstrings and CLI --help
    group: str  # the builder method that sets it, e.g. "training"
    check: Optional[Check] = None  # None: any value (checked later by the code that uses it)
    aliases: tuple = ()  # renamed RLlib names, accepted with a DeprecationWarning
    key: Optional[str] = None  # dict key when it differs from name (RLlib's "lambda")
    also_in: tuple = ()  # further builders that accept it (RLlib moved some options)
    positional: bool = False  # may be passed positionally, e.g. config.environment("CartPole-v1")
    cli: bool = True  # False for values a command line cannot express (callables, spaces, objects)
    # How a value may name code by a string path, e.g. env="pkg.module:MyEnv": (value, import_name) -> the
    # value with such paths resolved through `import_name` (a checkpoint's Trust: config_json.py's _NamesThrough).
    resolve_names: Optional[Callable[[Any, Callable], Any]] = None
    # reset_config (Tune's PBT) may change it in place: the code reads it afresh at each use, or a Learner /
    # EnvRunner hook (Learner.when_config_changes) applies it. Other options need a rebuild.
    mutable: bool = False
    remakes_env: bool = False  # a change recreates the EnvRunners' envs (keeping modules and connector states)
    # A dict given to the builder or update_from_dict is merged into the current one at every depth (RLlib's
    # deep_update for env_config); setting the attribute replaces it.
    merges_dicts: bool = False

    @property
    def dict_key(self) -> str:
        return self.key or self.name

    @property
    def groups(self) -> tuple:
        return (self.group, *self.also_in)

    @property
    def annotation(self) -> Any:
        return self.check.annotation if self.check else Any

    @property
    def allowed(self) -> str:
        return self.check.allowed if self.check else "any value"

    def check_value(self, value: Any) -> Any:
        """Return the (normalized) value or raise ValueError naming the option; Tune markers pass."""
        if self.check is None or is_search_space(value):
            return value
        return self.check.apply(self.name, value)

    def parse(self, text: str) -> Any:
        """Turn a command-line string into a checked value ("0.001", "[[0, 1e-3]]", "auto", "None")."""
        value = _parse_literal(text)
        try:
            return self.check_value(value)
        except ValueError:
            if value is text:
                raise
            try:  # e.g. an env id that happens to look like a number
                return self.check_value(text)
            except ValueError:
                pass
            raise


def _parse_literal(text: str) -> Any:
    for load in (json.loads, ast.literal_eval):
        try:
            return load(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    word = text.strip().lower()
    if word in ("inf", "+inf", "-inf", "infinity", "-infinity"):
        return float(word)
    return {"none": None, "null": None, "true": True, "false": False}.get(word, text)


# -- deprecated names ----------------------------------------------------------------------------

_warned_aliases: set = set()  # one DeprecationWarning per alias per process


def warn_alias(alias: str, name: str) -> None:
    if alias in _warned_aliases:
        return
    _warned_aliases.add(alias)
    warnings.warn(f"`{alias}` is deprecated: use `{name}` instead.", DeprecationWarning,
                  stacklevel=_caller_stacklevel())


@dataclass(frozen=True)
class LegacyKey:
    """An old RLlib config-dict key with no option of its own (e.g. seed 003's `monitor`, `model`, `opt_type`).

    `translate(value)` returns the {option key: value} it stands for today ({} when the old key has no effect
    with this value) or raises ValueError saying what replaced it. Where it translates, one DeprecationWarning
    names the key and `replaced_by`.
    """

    key: str
    replaced_by: str  # what took its place, completing "`<key>` is an old RLlib config key: ..."
    translate: Callable[[Any], Mapping]
    builder: Optional[str] = None  # the builder method RLlib still takes it in as a keyword (`training(model=...)`)


def warn_legacy_key(legacy: LegacyKey) -> None:
    if legacy.key in _warned_aliases:
        return
    _warned_aliases.add(legacy.key)
    warnings.warn(f"`{legacy.key}` is an old RLlib config key: {legacy.replaced_by}", DeprecationWarning,
                  stacklevel=_caller_stacklevel())


def _caller_stacklevel() -> int:
    """Stack level of the first frame outside relayrl.algorithms, so warnings point at user code."""
    frame, level = sys._getframe(2), 2  # 1 would be warn_alias itself
    while frame is not None and frame.f_globals.get("__name__", "").startswith("relayrl.algorithms"):
        frame, level = frame.f_back, level + 1
    return level


# -- the table -----------------------------------------------------------------------------------

class OptionTable:
    """The ordered options of a config class, with lookups by name, dict key and alias."""

    def __init__(self, options: Iterable[Option] = (), group_help: Optional[Mapping] = None,
                 legacy: Iterable[LegacyKey] = ()):
        self._options: dict = {}
        self.group_help: dict = dict(group_help or {})
        self.legacy: dict = {entry.key: entry for entry in legacy}  # consulted only for keys no option has
        for option in options:
            self._add(option)
        self._reindex()

    def extend(self, options: Iterable[Option] = (), defaults: Optional[Mapping] = None,
               group_help: Optional[Mapping] = None, changes: Optional[Mapping[str, Mapping]] = None,
               legacy: Iterable[LegacyKey] = ()) -> "OptionTable":
        """A new table with more options, other defaults and/or other fields of inherited options (how a
        subclass derives its own). `changes`: {option name: {field: value}}, e.g. SAC's
        {"lr": {"default": None, "check": optional(...)}} or {"tau": {"mutable": True}}. `legacy`: more
        old dict keys (LegacyKey)."""
        table = OptionTable(self._options.values(), {**self.group_help, **(group_help or {})},
                            [*self.legacy.values(), *legacy])
        for option in options:
            table._add(option)
        for name, fields in (changes or {}).items():
            table._options[name] = dataclasses.replace(table._known(name, "change"), **fields)
        for name, default in (defaults or {}).items():
            option = table._known(name, "override the default of")
            table._options[name] = dataclasses.replace(option, default=option.check_value(default))
        table._reindex()
        return table

    def _known(self, name: str, what: str) -> Option:
        if name not in self._options:
            raise ValueError(f"cannot {what} unknown option `{name}`.{did_you_mean(name, self._options)}")
        return self._options[name]

    def mutable_names(self) -> frozenset:
        """Options reset_config may change in place."""
        return frozenset(o.name for o in self._options.values() if o.mutable)

    def _add(self, option: Option) -> None:
        existing = self._options.get(option.name)
        if existing is option:  # reached twice through a diamond of subclasses
            return
        if existing is not None:
            raise ValueError(f"option `{option.name}` is defined twice; override its default instead")
        option.check_value(option.default)  # a wrong default is a bug in the table: fail at import
        self._options[option.name] = option

    def _reindex(self) -> None:
        self._lookup: dict = {}  # name/key/alias -> (Option, is_deprecated_alias)
        for option in self._options.values():
            for word, deprecated in ((option.name, False), (option.dict_key, False),
                                     *((alias, True) for alias in option.aliases)):
                other = self._lookup.get(word)
                if other is not None and other[0].name != option.name:
                    raise ValueError(f"`{word}` names both `{other[0].name}` and `{option.name}`")
                self._lookup[word] = (option, deprecated)

    def __iter__(self):
        return iter(self._options.values())

    def __len__(self) -> int:
        return len(self._options)

    def __contains__(self, name: str) -> bool:
        return name in self._options

    def __getitem__(self, name: str) -> Option:
        return self._options[name]

    def options(self) -> tuple:
        return tuple(self._options.values())

    def groups(self) -> list:
        """Builder names in the order their first option was declared."""
        seen: dict = {}
        for option in self._options.values():
            for group in option.groups:
                seen.setdefault(group, None)
        return list(seen)

    def in_group(self, group: str) -> list:
        """The group's own options, then those it also accepts (RLlib's moved options)."""
        options = self._options.values()
        return [o for o in options if o.group == group] + [o for o in options if group in o.also_in]

    def is_alias(self, word: str) -> bool:
        entry = self._lookup.get(word)
        return entry is not None and entry[1]

    def resolve(self, word: str, *, owner: str, group: Optional[str] = None) -> Option:
        """The option a builder keyword (group given) or dict key (group None) names.

        Unknown words raise TypeError in a builder (like any bad keyword) and UnknownOptionError
        for dicts, both with a did-you-mean; deprecated aliases warn once.
        """
        entry = self._lookup.get(word)
        if entry is not None and (group is None or group in entry[0].groups):
            option, deprecated = entry
            if deprecated:
                warn_alias(word, option.name)
            return option
        if group is None:
            keys = [o.dict_key for o in self._options.values()]
            raise UnknownOptionError(f"{owner} has no option `{word}`.{_suggest(word, keys)}")
        message = f"{owner}.{group}() got an unexpected keyword argument '{word}'."
        if entry is not None:
            raise TypeError(f"{message} `{entry[0].name}` is set in `{entry[0].group}()`.")
        names = [o.name for o in self.in_group(group)]
        hint = _suggest(word, names) or _suggest(word, list(self._options))
        raise TypeError(message + hint)

    def collect(self, values: Mapping, *, owner: str, group: Optional[str] = None) -> dict:
        """{option name: value} for the given keywords/keys, skipping NotProvided. In dicts (group None), an
        old RLlib key with no option of its name is translated through its LegacyKey (or refused with the
        LegacyKey's message)."""
        updates: dict = {}
        given_as: dict = {}
        translated: set = set()
        if group is None or any(self.legacy[word].builder == group for word in values
                                if word in self.legacy and word not in self._lookup):
            values, translated = self._translate_legacy(values, owner, group)
        for word, value in values.items():
            if value is NotProvided:
                continue
            # what an old key stands for may be set in another builder (`training(model=...)`: `model_config`)
            option = self.resolve(word, owner=owner, group=None if word in translated else group)
            if option.name in updates:
                error = TypeError if group else UnknownOptionError
                raise error(f"{owner}: `{option.name}` given twice (as `{given_as[option.name]}` "
                            f"and `{word}`)")
            updates[option.name] = value
            given_as[option.name] = word
        return updates

    def _translate_legacy(self, values: Mapping, owner: str, group: Optional[str]) -> Tuple[Mapping, set]:
        """The values with old keys replaced by what they stand for (in a builder: only its own old keywords),
        and the names they became."""
        out: dict = {}
        new_words: set = set()
        for word, value in values.items():
            legacy = self.legacy.get(word) if word not in self._lookup else None
            if legacy is None or value is NotProvided or (group is not None and legacy.builder != group):
                out[word] = value
                continue
            try:
                translated = dict(legacy.translate(value))
            except ValueError as error:
                raise UnknownOptionError(f"{owner}: `{word}` is an old RLlib config key: {error}") from None
            for key, new_value in translated.items():
                if key in out or key in values:
                    raise UnknownOptionError(f"{owner}: `{key}` given twice (as `{key}` and through the old key "
                                             f"`{word}`)")
                out[key] = new_value
                new_words.add(key)
            warn_legacy_key(legacy)
        return out, new_words

    def make_builder(self, group: str, owner: type) -> Callable:
        """A keyword-only builder method for `group` with a real signature and a docstring.

        The method resolves keywords against `type(self)._option_table` at call time (so a
        subclass's options are found), hands {name: value} to `self._set_options`, returns self.
        """
        options = self.in_group(group)
        positional = [o.name for o in options if o.positional]

        def builder(self, *args, **kwargs):
            cls_name = type(self).__name__
            if len(args) > len(positional):
                raise TypeError(f"{cls_name}.{group}() takes {len(positional)} positional "
                                f"argument(s) but {len(args)} were given; pass options by keyword")
            for name, value in zip(positional, args):
                if name in kwargs:
                    raise TypeError(f"{cls_name}.{group}() got multiple values for argument '{name}'")
                kwargs[name] = value
            table = type(self)._option_table
            self._set_options(table.collect(kwargs, owner=cls_name, group=group), merge_dicts=True)
            return self

        kind = inspect.Parameter.KEYWORD_ONLY
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        params += [
            inspect.Parameter(o.name, inspect.Parameter.POSITIONAL_OR_KEYWORD if o.positional else kind,
                              default=NotProvided, annotation=o.annotation)
            for o in sorted(options, key=lambda o: not o.positional)
        ]
        builder.__signature__ = inspect.Signature(params)
        builder.__name__ = group
        builder.__qualname__ = f"{owner.__qualname__}.{group}"
        builder.__module__ = owner.__module__
        builder.__doc__ = self._builder_doc(group, options)
        return builder

    def _builder_doc(self, group: str, options: list) -> str:
        lines = [self.group_help.get(group, f"Sets the {group} options."), "",
                 "Only the arguments you pass are set; the others keep their values.", "", "Args:"]
        for o in options:
            extra = f" Default: {short_repr(o.default, 60)}."
            if o.group != group:
                extra += f" (Also settable in `{o.group}()`.)"
            if o.aliases:
                extra += f" Deprecated name: {', '.join(o.aliases)}."
            lines.append(f"    {o.name}: {o.help}{extra}")
        lines += ["", "Returns:", "    This config, for chaining."]
        return "\n".join(lines)
