"""Python definitions around changed lines: spans and signatures at base and head, from ``ast``.

A changed line belongs to its innermost definition: a function or method, a class-level
attribute (``supports_x = True``), else the class, else nothing (module level).
"""

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Definition:
    qualname: str
    kind: str  # function, class or attribute
    start: int  # first decorator line
    end: int
    signature: str

    @property
    def name(self):
        return self.qualname.rsplit(".", 1)[-1]


def parse_python(text):
    """The module's AST, or None when the text does not parse."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def definitions(tree):
    """Every function, class and class attribute of a module, outermost first."""
    found = []

    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                found.append(Definition(qualname, kind, start, child.end_lineno, signature(child)))
                visit(child, qualname + ".", kind == "class")
            elif in_class and isinstance(child, (ast.Assign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found.append(Definition(f"{prefix}{target.id}", "attribute", child.lineno,
                                                child.end_lineno, ast.unparse(child).split("\n")[0]))

    visit(tree, "", False)
    return found


def signature(node):
    """``def name(args) -> ret`` or ``class Name(bases)``, on one line."""
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(base) for base in node.bases + node.keywords)
        return f"class {node.name}({bases})" if bases else f"class {node.name}"
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def innermost(defs, line):
    """The innermost definition whose span holds ``line``, or None."""
    holding = [d for d in defs if d.start <= line <= d.end]
    return max(holding, key=lambda d: (d.start, -d.end)) if holding else None


def touched(defs, lines):
    """{qualname: Definition} of the innermost definitions holding any of ``lines``."""
    result = {}
    for line in lines:
        found = innermost(defs, line)
        if found is not None:
            result[found.qualname] = found
    return result


def span(path, definition):
    return f"{path}:{definition.start}-{definition.end}"


def signature_arguments(signature):
    """The ``ast.arguments`` of a ``def`` signature line, or None when it is not one."""
    try:
        node = ast.parse(signature + ": pass").body[0]
    except SyntaxError:
        return None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def own_nodes(function):
    """Nodes of ``function``'s body, not of the functions, lambdas or classes nested in it."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))
