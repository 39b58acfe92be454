"""XGrammar's own parser and matcher on grammars gbnfc wrote with `--target xgrammar`.

Reads JSON lines on standard input, one grammar each:
  {"name": ..., "grammar": EBNF text, "texts": [{"text": ..., "viable": N, "accepted": B}]}
or, for a structural tag (`gbnfc tools --emit structural-tag`), "structural_tag": its JSON
object in place of "grammar" (read by `Grammar.from_structural_tag`).
where `viable` (in characters) and `accepted` are gbnfc's recognizer's verdict. For each
grammar XGrammar parses and compiles the text (`Grammar.from_ebnf`, then a compiler over
an empty vocabulary, as its own tests do to match strings); for each text it feeds one
character at a time and notes where it is refused and whether it can end there. Prints a
line per disagreement and a closing count, and exits 1 on any disagreement.

XGrammar's Python package imports torch when imported (for its token-mask kernels), which
is gigabytes; its parser and matcher are in the compiled library the wheel ships, loaded
here through tvm-ffi without the package's `__init__`. Install: `pip install --no-deps
xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2` (scripts/setup does, in target/openai-venv).
"""

import importlib.util
import json
import pathlib
import sys
import types


def xgrammar_core():
    """XGrammar's FFI API (Grammar, GrammarCompiler, GrammarMatcher, TokenizerInfo)."""
    spec = importlib.util.find_spec("xgrammar")
    if spec is None or spec.origin is None:
        sys.exit("xgrammar_check: xgrammar is not installed (run scripts/setup)")
    package = types.ModuleType("xgrammar")
    package.__path__ = [str(pathlib.Path(spec.origin).parent)]
    sys.modules["xgrammar"] = package
    import xgrammar.load_binding  # noqa: F401  (loads libxgrammar_bindings)
    from xgrammar.tvm_ffi_binding import _ffi_api as core

    return core


def main():
    core = xgrammar_core()
    vocabulary = core.TokenizerInfo([], 0, None, None, False)
    compiler = core.GrammarCompiler(vocabulary, 1, False, -1, False)
    grammars = texts = 0
    failures = []
    for line in sys.stdin:
        case = json.loads(line)
        name = case["name"]
        try:
            if "structural_tag" in case:
                grammar = core.Grammar.from_structural_tag(json.dumps(case["structural_tag"]))
            else:
                grammar = core.Grammar.from_ebnf(case["grammar"], "root")
            compiled = compiler.compile_grammar_ebnf(grammar)
        except Exception as error:  # XGrammar raises RuntimeError with line and column
            failures.append(f"{name}: XGrammar refuses the grammar: {error}")
            continue
        grammars += 1
        for expected in case["texts"]:
            text = expected["text"]
            matcher = core.GrammarMatcher(compiled, None, True, 0, None)
            viable = 0
            for character in text:
                if not matcher.accept_string(character, False):
                    break
                viable += 1
            accepted = viable == len(text) and matcher.is_terminated()
            texts += 1
            if (viable, accepted) != (expected["viable"], expected["accepted"]):
                failures.append(
                    f"{name}: {text!r}: gbnfc {(expected['viable'], expected['accepted'])}, "
                    f"XGrammar {(viable, accepted)}"
                )
    for failure in failures:
        print(failure)
    print(f"xgrammar_check: {grammars} grammars read, {texts} texts, {len(failures)} disagreements")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
