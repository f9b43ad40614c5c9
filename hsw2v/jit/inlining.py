"""A fix for numba's inliner, applied when the package's kernels load: numba copies
a callee's IR block by block, and each block's copy copies the callee's whole scope
(every variable), so inlining costs blocks × variables. The training kernels inline
steps of hundreds of blocks, several levels deep: the copies took most of a first
run's compile (skip-gram: 10.7 of 14.6 s). Copying the blocks in one ``deepcopy``
shares one copy of the scope, as the original blocks share one scope; the compiled
code is the same (numba issue 8989, "Spurious deep copies in inlining").

numba also copies the callee's IR a second time, "to return an unmutated copy",
which every caller of ``inline_ir`` in numba drops: that copy is skipped (0.7 s of
the Quick start's first run, the same bits).

Applied at the first compile of a process (:func:`at_first_compile`: a command that
loads every kernel from numba's cache never reads numba's source), and only where
numba's source has the exact lines replaced; any other numba compiles as it would
(more slowly)."""
from __future__ import annotations

import inspect
import textwrap

_PER_BLOCK = """\
        kernel_copy.blocks = {}
        for block_label, block in the_ir.blocks.items():
            new_block = copy.deepcopy(the_ir.blocks[block_label])
            kernel_copy.blocks[block_label] = new_block
"""
_AT_ONCE = """\
        kernel_copy.blocks = copy.deepcopy(the_ir.blocks)
"""
_SECOND_COPY = """\
    callee_ir_original = copy_ir(callee_ir)
"""
_NO_SECOND_COPY = """\
    callee_ir_original = None  # (numba's callers of inline_ir drop it)
"""


def copy_blocks_at_once() -> bool:
    """Make numba's ``InlineWorker.inline_ir`` copy a callee's blocks in one
    ``deepcopy`` (and not copy them again for a result nobody reads). Returns
    whether it now does (False: numba's code differs)."""
    from numba.core import inline_closurecall as module

    method = module.InlineWorker.inline_ir
    if getattr(method, "_hsw2v_copies_at_once", False):
        return True
    try:
        source = textwrap.dedent(inspect.getsource(method))
    except (OSError, TypeError):
        return False
    if source.count(_PER_BLOCK) != 1:
        return False
    source = source.replace(_PER_BLOCK, _AT_ONCE)
    if source.count(_SECOND_COPY) == 1:
        source = source.replace(_SECOND_COPY, _NO_SECOND_COPY)
    namespace: dict = {}
    code = compile(source, inspect.getsourcefile(method) or "numba", "exec")
    exec(code, module.__dict__, namespace)  # noqa: S102 (numba's own source, one block changed)
    patched = namespace["inline_ir"]
    patched._hsw2v_copies_at_once = True
    module.InlineWorker.inline_ir = patched
    return True


def at_first_compile() -> None:
    """Apply :func:`copy_blocks_at_once` when numba first starts compiling."""
    from numba.core import event

    class FirstCompile(event.Listener):  # (stays registered: leaving during a broadcast
        done = False                       # would skip the next listener)

        def on_start(self, ev):
            if not self.done:
                self.done = True
                copy_blocks_at_once()

        def on_end(self, ev):
            pass

    event.register("numba:compile", FirstCompile())
