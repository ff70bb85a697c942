"""A Griffe extension for the API reference: the config builders, which are made at run time.

`config.training(...)`, `config.env_runners(...)` and the other builders are generated from the option
table (relayrl/algorithms/options.py) when a config class is defined, so reading the source finds none of
them. For each config class this adds the builders the class itself (re)defines, with their real signatures
and docstrings, taken from the imported class.
"""
from __future__ import annotations

import importlib
import inspect

import griffe


class ConfigBuilders(griffe.Extension):
    def on_class_members(self, *, cls: griffe.Class, **kwargs) -> None:
        if not cls.name.endswith("Config"):
            return
        runtime = getattr(importlib.import_module(cls.module.path), cls.name, None)
        table = getattr(runtime, "_option_table", None)
        if table is None:
            return
        for group in table.groups():
            builder = runtime.__dict__.get(group)
            if builder is None or group in cls.members:  # inherited, or written by hand (found in the source)
                continue
            cls.set_member(group, self._function(group, builder, cls))

    @staticmethod
    def _function(name: str, builder, cls: griffe.Class) -> griffe.Function:
        parameters = [
            griffe.Parameter(p.name, kind=griffe.ParameterKind(p.kind.description),
                             annotation=None if p.annotation is inspect.Parameter.empty else inspect.formatannotation(p.annotation),
                             default=None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in inspect.signature(builder).parameters.values()
        ]
        function = griffe.Function(name, parameters=griffe.Parameters(*parameters), returns=cls.name, parent=cls)
        parser = cls.docstring.parser if cls.docstring else None
        function.docstring = griffe.Docstring(inspect.getdoc(builder) or "", parent=function, parser=parser)
        return function
