"""The languages the index parses: file suffixes, the grammar wheel, and one query each.

Each grammar comes from the wheel the tree-sitter project publishes for it (``tree-sitter-python``
and so on), which carries the compiled parser: nothing is downloaded at run time. A grammar that
cannot be loaded (a missing wheel, an ABI the installed ``tree-sitter`` refuses, a query it
rejects) makes its files plain text for the index: they are cut into windows, and one line says
so (``Grammar.problem``).

A query names what to extract with its capture names:

- ``@def.<kind>`` the whole definition (kind: class, interface, enum, struct, trait, type, impl,
  function, namespace, object, annotation), with ``@name`` its name node. A function whose
  nearest enclosing definition is a class-like one is reported as a method.
- ``@ref.<kind>`` a name the code uses: ``call``, ``new`` (an instance created), ``extends``,
  ``implements``, ``import``, ``type``, ``annotation``.

The queries are written for this index (what a reference graph and a search need), not the
grammars' own ``tags.scm``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

CLASS_LIKE = frozenset({"class", "interface", "enum", "struct", "trait", "impl", "object", "annotation", "namespace"})

PYTHON = """
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(class_definition superclasses: (argument_list [(identifier) @ref.extends (attribute attribute: (identifier) @ref.extends)]))
(call function: [(identifier) @ref.call (attribute attribute: (identifier) @ref.call)])
(decorator [(identifier) @ref.annotation (attribute attribute: (identifier) @ref.annotation)
            (call function: [(identifier) @ref.annotation (attribute attribute: (identifier) @ref.annotation)])])
(import_from_statement name: [(dotted_name (identifier) @ref.import .) (aliased_import name: (dotted_name (identifier) @ref.import .))])
"""

JAVA = """
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.annotation
(method_declaration name: (identifier) @name) @def.function
(constructor_declaration name: (identifier) @name) @def.function
(superclass [(type_identifier) @ref.extends (generic_type (type_identifier) @ref.extends)])
(super_interfaces (type_list [(type_identifier) @ref.implements (generic_type (type_identifier) @ref.implements)]))
(extends_interfaces (type_list [(type_identifier) @ref.extends (generic_type (type_identifier) @ref.extends)]))
(method_invocation name: (identifier) @ref.call)
(object_creation_expression type: [(type_identifier) @ref.new (generic_type (type_identifier) @ref.new)])
(marker_annotation name: (identifier) @ref.annotation)
(annotation name: (identifier) @ref.annotation)
(import_declaration (scoped_identifier name: (identifier) @ref.import))
"""

KOTLIN = """
(class_declaration name: (identifier) @name) @def.class
(object_declaration name: (identifier) @name) @def.object
(function_declaration name: (identifier) @name) @def.function
(delegation_specifier [(user_type (identifier) @ref.extends)
                       (constructor_invocation (user_type (identifier) @ref.extends))])
(call_expression . [(identifier) @ref.call (navigation_expression (identifier) @ref.call .)])
(annotation (user_type (identifier) @ref.annotation))
(import (qualified_identifier (identifier) @ref.import .))
"""

JAVASCRIPT = """
(class_declaration name: (identifier) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (property_identifier) @name) @def.function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(class_heritage [(identifier) @ref.extends (member_expression property: (property_identifier) @ref.extends)])
(call_expression function: [(identifier) @ref.call (member_expression property: (property_identifier) @ref.call)])
(new_expression constructor: [(identifier) @ref.new (member_expression property: (property_identifier) @ref.new)])
(import_specifier name: (identifier) @ref.import)
"""

TYPESCRIPT = """
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(type_alias_declaration name: (type_identifier) @name) @def.type
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(function_signature name: (identifier) @name) @def.function
(method_definition name: (property_identifier) @name) @def.function
(method_signature name: (property_identifier) @name) @def.function
(abstract_method_signature name: (property_identifier) @name) @def.function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(module name: (identifier) @name) @def.namespace
(extends_clause value: [(identifier) @ref.extends (member_expression property: (property_identifier) @ref.extends)])
(implements_clause [(type_identifier) @ref.implements (generic_type name: (type_identifier) @ref.implements)])
(extends_type_clause type: [(type_identifier) @ref.extends (generic_type name: (type_identifier) @ref.extends)])
(call_expression function: [(identifier) @ref.call (member_expression property: (property_identifier) @ref.call)])
(new_expression constructor: [(identifier) @ref.new (member_expression property: (property_identifier) @ref.new)])
(import_specifier name: (identifier) @ref.import)
(type_annotation [(type_identifier) @ref.type (generic_type name: (type_identifier) @ref.type)])
"""

GO = """
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.function
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (pointer_type) (function_type)
                                                (map_type) (slice_type) (array_type) (channel_type) (generic_type)]) @def.type
(method_elem name: (field_identifier) @name) @def.function
(field_declaration_list (field_declaration . type: [(type_identifier) @ref.extends
                                                    (pointer_type (type_identifier) @ref.extends)] .))
(call_expression function: [(identifier) @ref.call (selector_expression field: (field_identifier) @ref.call)])
(composite_literal type: [(type_identifier) @ref.new (qualified_type name: (type_identifier) @ref.new)])
(parameter_declaration type: [(type_identifier) @ref.type (pointer_type (type_identifier) @ref.type)])
"""

RUST = """
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(mod_item name: (identifier) @name) @def.namespace
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(macro_definition name: (identifier) @name) @def.function
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)
                  (scoped_type_identifier name: (type_identifier) @name)]) @def.impl
(impl_item trait: [(type_identifier) @ref.implements (generic_type type: (type_identifier) @ref.implements)
                   (scoped_type_identifier name: (type_identifier) @ref.implements)])
(call_expression function: [(identifier) @ref.call (field_expression field: (field_identifier) @ref.call)
                            (scoped_identifier name: (identifier) @ref.call)])
(macro_invocation macro: (identifier) @ref.call)
(struct_expression name: [(type_identifier) @ref.new (scoped_type_identifier name: (type_identifier) @ref.new)])
(use_declaration argument: [(scoped_identifier name: (identifier) @ref.import) (identifier) @ref.import])
(use_list [(identifier) @ref.import (scoped_identifier name: (identifier) @ref.import)])
"""

C = """
(function_definition declarator: [(function_declarator declarator: (identifier) @name)
                                  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))]) @def.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(call_expression function: [(identifier) @ref.call (field_expression field: (field_identifier) @ref.call)])
(preproc_include path: [(string_literal) (system_lib_string)] @ref.import)
"""

CPP = """
(function_definition declarator: [(function_declarator declarator: [(identifier) @name (field_identifier) @name
                                                                   (qualified_identifier name: (identifier) @name)
                                                                   (destructor_name) @name (operator_name) @name])
                                  (pointer_declarator declarator: (function_declarator declarator: [(identifier) @name (qualified_identifier name: (identifier) @name)]))
                                  (reference_declarator (function_declarator declarator: [(identifier) @name (qualified_identifier name: (identifier) @name)]))]) @def.function
(field_declaration declarator: (function_declarator declarator: [(field_identifier) @name (identifier) @name])) @def.function
(declaration declarator: (function_declarator declarator: [(identifier) @name (field_identifier) @name])) @def.function
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(namespace_definition name: (namespace_identifier) @name) @def.namespace
(alias_declaration name: (type_identifier) @name) @def.type
(type_definition declarator: (type_identifier) @name) @def.type
(base_class_clause [(type_identifier) @ref.extends (qualified_identifier name: (type_identifier) @ref.extends)
                    (template_type name: (type_identifier) @ref.extends)])
(call_expression function: [(identifier) @ref.call (field_expression field: (field_identifier) @ref.call)
                            (qualified_identifier name: (identifier) @ref.call)])
(new_expression type: (type_identifier) @ref.new)
(preproc_include path: [(string_literal) (system_lib_string)] @ref.import)
"""


@dataclass(frozen=True)
class Grammar:
    """One language: its name, the wheel's module and function, and the query."""

    name: str
    module: str
    function: str
    query: str
    suffixes: tuple[str, ...]
    doc_from_body: bool = False  # Python: the docstring is the body's first statement
    loader: Callable[[], Any] | None = None  # tests: a grammar of their own (it is part of the identity)

    def load(self) -> tuple[Any, Any]:
        """(tree_sitter.Language, tree_sitter.Query); raises whatever goes wrong."""
        import tree_sitter

        pointer = self.loader() if self.loader is not None else getattr(importlib.import_module(self.module), self.function)()
        language = tree_sitter.Language(pointer)
        return language, tree_sitter.Query(language, self.query)


GRAMMARS: tuple[Grammar, ...] = (
    Grammar("python", "tree_sitter_python", "language", PYTHON, (".py", ".pyi", ".pyw"), doc_from_body=True),
    Grammar("java", "tree_sitter_java", "language", JAVA, (".java",)),
    Grammar("kotlin", "tree_sitter_kotlin", "language", KOTLIN, (".kt", ".kts")),
    Grammar("javascript", "tree_sitter_javascript", "language", JAVASCRIPT, (".js", ".mjs", ".cjs", ".jsx")),
    Grammar("typescript", "tree_sitter_typescript", "language_typescript", TYPESCRIPT, (".ts", ".mts", ".cts")),
    Grammar("tsx", "tree_sitter_typescript", "language_tsx", TYPESCRIPT, (".tsx",)),
    Grammar("go", "tree_sitter_go", "language", GO, (".go",)),
    Grammar("rust", "tree_sitter_rust", "language", RUST, (".rs",)),
    Grammar("c", "tree_sitter_c", "language", C, (".c", ".h")),
    Grammar("cpp", "tree_sitter_cpp", "language", CPP, (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".ipp")),
)


def by_suffix(grammars: tuple[Grammar, ...] = GRAMMARS) -> dict[str, Grammar]:
    return {suffix: g for g in grammars for suffix in g.suffixes}
