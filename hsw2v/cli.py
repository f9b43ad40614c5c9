"""Command line: a thin layer over the Python API (``hsw2v --help``).

Only click is imported at start-up; numba and numpy load inside the commands
that need them, so ``--help`` stays fast.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Iterable
from functools import partial

import click

from .errors import HSW2VError, HSW2VWarning
from .model.default_files import (
    DEFAULT_MODEL,
    check_default_output,
    default_model,
    default_vectors,
)
from .model.word2vec_format import vector_format as vector_format_named
from .model.word2vec_format import vector_formats
from .settings import (
    CHECKPOINT_MINUTES,
    COUNT_MEMORY_HELP,
    EngineSettings,
    TrainSettings,
    parse_size,
)
from .system.compiling import CompileWatch, about
from .system.signals import Terminated, catch_signals, pending_signal, raise_pending


class _OneLineErrors(click.Group):
    """A group whose errors are one line on stderr and a non-zero exit, never a traceback."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        catch_signals()
        warnings.showwarning = _warn
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            raise_pending()  # a signal whose raise was lost ends with its exit status
        except HSW2VError as e:
            _fail(e.for_command_line(), 1)
        except click.exceptions.NoArgsIsHelpError as e:
            e.show()
            sys.exit(2)
        except Terminated as e:
            _fail(e.message, e.code)
        except click.exceptions.Abort as e:  # click's form of KeyboardInterrupt
            if isinstance(e.__cause__, Terminated):
                _fail(e.__cause__.message, e.__cause__.code)
            _fail("interrupted", 130)
        except click.ClickException as e:
            _fail(e.format_message().replace("\n", " "), e.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except MemoryError:
            _fail("out of memory", 1)
        except RuntimeError as e:  # (a thread pool's worker refused by the system)
            signalled = pending_signal()  # (or a signal that a library turned into this)
            if signalled is not None:
                _fail(*((signalled.message, signalled.code) if issubclass(signalled, Terminated)
                        else ("interrupted", 130)))
            if "can't start new thread" not in str(e):
                raise
            _fail(f"{e}: the system's limit on processes (ulimit -u, a pids cgroup) allows no "
                  "more threads; lower --threads", 1)
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            _fail(f"{where}{e.strerror or e}", 1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hsw2v-trainer")
def cli() -> None:
    """Train and use word vectors with hierarchical softmax."""


def main() -> None:
    """Console entry point."""
    cli.main(prog_name="hsw2v")


def _warn(message, *args, **kwargs) -> None:
    if isinstance(message, HSW2VWarning):
        message = message.for_command_line()
    click.echo(f"hsw2v: warning: {message}", err=True)


def _fail(message: str, code: int) -> None:
    click.echo(f"hsw2v: error: {message}", err=True)
    if code in (129, 130, 143):  # a signal: threads may still block on input, skip finalizing
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _special_file(path: str) -> bool:
    """Whether ``path`` is a character device (``/dev/null``) or a FIFO, which an
    output is written into rather than replaced."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _named_files(corpus: Iterable[str]) -> list[str]:
    """The CORPUS arguments that name a file themselves (not a directory or a glob)."""
    return [c for c in corpus if os.path.isfile(c)]


def _say_directories(corpus: Iterable[str], files: list[str], quiet: bool) -> None:
    """Say how many files each directory of CORPUS gave (hidden ones are skipped)."""
    if quiet:
        return
    for arg in corpus:
        if os.path.isdir(arg):
            top = os.path.join(arg, "")
            n = sum(f.startswith(top) for f in files)
            click.echo(f"hsw2v: {arg}: reading {n} file{'s' * (n != 1)}", err=True)


def _strict_json(data):
    """``data`` with each NaN or infinite number as ``null``, and beside it, in the
    same object, ``"why_null": {key: reason}``: JSON has no such numbers."""
    if isinstance(data, list):
        return [_strict_json(x) for x in data]
    if not isinstance(data, dict):
        return data
    out, why = {}, {}
    for key, value in data.items():
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None
            why[key] = "not a number (NaN)" if math.isnan(value) else "infinite"
        else:
            out[key] = _strict_json(value)
    return {**out, "why_null": why} if why else out


def _emit(data, as_json: bool, lines: Iterable[str]) -> None:
    """Print a command's result: ``data`` as one JSON document (strict JSON: see
    :func:`_strict_json`), or the text ``lines``."""
    if as_json:
        click.echo(json.dumps(_strict_json(data), allow_nan=False))
    else:
        for line in lines:
            click.echo(line)


def _setting(name: str, help_suffix: str = "", **override):
    """The click option for :class:`TrainSettings` field ``name``: its default,
    choices and help come from there (``override`` changes them for one command)."""
    f = next(f for c in (TrainSettings, EngineSettings) for f in dataclasses.fields(c)
             if f.name == name)
    meta = f.metadata
    kw: dict = {"default": f.default, "show_default": f.default is not None,
                "help": meta["help"] + help_suffix}
    if "choices" in meta:
        kw["type"] = click.Choice(meta["choices"])
    elif "flag" not in meta:
        kw["type"] = meta.get("type", type(f.default))
    kw.update(override)
    return click.option(meta.get("flag", "--" + name.replace("_", "-")), **kw)


def _declared_options(command):
    """Options for the settings that model kinds and trees declare
    (:func:`hsw2v.settings.declared_settings`): a built-in one's from its
    TrainSettings field (:func:`_setting`); one registered later, unset unless given."""
    from .settings import FIELDS, declared_settings

    for d in reversed(declared_settings().values()):
        if d.name in FIELDS:
            command = _setting(d.name)(command)
            continue
        kw: dict = {"default": None, "help": f"{d.help} [{d.default}]"}
        if d.allowed() is not None:
            kw["type"] = click.Choice(list(d.allowed()))
        elif d.flag is None:
            kw["type"] = d.value_type
        command = click.option(d.flag or "--" + d.name.replace("_", "-"), d.name, **kw)(command)
    return command


def _settings(*names: str):
    """The click options for several settings (see :func:`_setting`), in this order."""
    def add(command):
        for name in reversed(names):
            command = _setting(name)(command)
        return command
    return add


@cli.command()
@click.argument("corpus", nargs=-1)
@click.option("-o", "--output", help="Write 'word count' lines here (default, or -: stdout).")
@click.option("--model", "model_path",
              help=f"List this model's vocabulary instead of counting a corpus [{DEFAULT_MODEL}].")
@_setting("min_count", default=None, show_default=False,
          help_suffix=f" [{TrainSettings.min_count} for a corpus; a model's vocabulary is listed whole]")
@_setting("max_vocab")
@_setting("threads", help="Counting threads [all cores].")
@click.option("--count-memory", metavar="SIZE", help=COUNT_MEMORY_HELP)
@click.option("--quiet", is_flag=True, help="No progress bar or summary.")
def vocab(corpus: tuple[str, ...], output: str | None, model_path: str | None, min_count: int | None,
          max_vocab: int | None, threads: int | None, count_memory: str | None, quiet: bool) -> None:
    """Count the words of CORPUS in one pass and list them, most frequent first.

    The output is word2vec.c's -save-vocab format, which `hsw2v train --read-vocab`
    reads. CORPUS: one or more files, directories (read recursively, in sorted
    order), quoted globs or URLs of plain, .gz, .bz2 or .zst UTF-8 text, or - for stdin.
    Without CORPUS,
    list the vocabulary of the model that `hsw2v train` wrote here (model.npz).
    """
    from .system.files import check_distinct, check_writable

    if corpus and model_path:
        raise HSW2VError("give a CORPUS to count or --model, not both")
    if min_count is not None and min_count < 1:
        raise HSW2VError(f"--min-count must be at least 1, got {min_count}")
    if max_vocab is not None and max_vocab < 1:
        raise HSW2VError(f"--max-vocab must be at least 1, got {max_vocab}")
    if output == "-":
        output = None  # standard output, as - is standard input for CORPUS
    through = bool(output) and _special_file(output)  # /dev/null, a FIFO: written through
    if output and not through:
        check_writable(output)
    if not corpus:
        from .model.reading import load_model

        model_path = model_path or default_model("a CORPUS to count")
        kept = load_model(model_path).vocab.pruned(min_count or 1, max_vocab)
        summary = f"{len(kept)} words of {model_path}, covering {kept.total} tokens"
    else:
        from .counting.corpus import count_words  # (numba loads only to count)
        from .text.reader import corpus_files, describe

        min_count = min_count or TrainSettings.min_count
        files = corpus_files(corpus, exclude=[output] if output else [])
        check_distinct({"-o": output}, {"corpus": _named_files(corpus)})
        _say_directories(corpus, files, quiet)
        threads = TrainSettings(threads=threads).resolved().threads
        counts = count_words(files, progress=not quiet, threads=threads, min_count=min_count,
                             memory=parse_size(count_memory, "count_memory"))
        if counts.tokens == 0:
            raise HSW2VError(f"{describe(files)}: the corpus is empty (no words)")
        kept = counts.to_vocab(min_count, max_vocab)
        summary = (f"{counts.tokens} tokens, {counts.n_types} types; {len(kept)} types kept "
                   f"(min-count {min_count}) covering {kept.total} tokens")
    if through:
        with open(output, "w", encoding="utf-8") as f:
            f.writelines(f"{w} {c}\n" for w, c in zip(kept.words, kept.counts.tolist()))
    elif output:
        kept.save(output)
    else:
        click.echo("".join(f"{w} {c}\n" for w, c in zip(kept.words, kept.counts.tolist())), nl=False)
    if not quiet:
        click.echo(summary, err=True)


@cli.command()
@click.argument("corpus", nargs=-1, required=True)
@click.option("-o", "--output", help="Write the word vectors here, in --format [" + ", ".join(
              f"{f.default_file} for {f.name}" for f in vector_formats.values())
              + ", when neither -o nor --save-model is given].")
@click.option("--format", "vector_format", type=click.Choice(list(vector_formats)),
              help="The vectors' format [text]: " + "; ".join(
                  f"{f.name}: {f.help}" for f in vector_formats.values()) + ".")
@click.option("--binary", is_flag=True, help="The same as --format binary.")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="Also keep a copy of the vectors that `similar` loads in milliseconds, in "
              "the user's cache directory (see HSW2V_CACHE_SIZE in the docs' Files guide).")
@click.option("--save-model", help="Write the full model here (.npz; loads without pickle) "
              f"[{DEFAULT_MODEL} when neither -o nor --save-model is given].")
@_settings("arch", "dim", "window", "min_count", "max_vocab", "sample", "alpha",
           "min_alpha", "epochs", "threads", "seed")
@_setting("tree")
@click.option("--tree-from", help="semantic: cluster the context vectors of this model (its "
              "vocabulary is used); without it a first Huffman pass is trained (one-shot). "
              "wordnet: split wide nodes by those vectors.")
@_setting("node_bias")
@_declared_options
@click.option("--read-vocab", help="Use this 'word count' file instead of counting the corpus.")
@_setting("spool")
@click.option("--checkpoint", help="Save the full training state here (atomically) every "
              "--checkpoint-every minutes and after each epoch; --resume continues from it.")
@click.option("--checkpoint-every", type=float, default=CHECKPOINT_MINUTES, show_default=True,
              help="Minutes between checkpoints (0: after every block).")
@click.option("--resume", help="Continue the run saved in this checkpoint, on the same CORPUS "
              "and with its settings (only --threads may change).")
@click.option("--init-model", help="Train this model further on CORPUS, keeping its vocabulary, "
              "tree and vector size; words outside its vocabulary are skipped and counted.")
@click.option("--grow", is_flag=True, help="With --init-model: first add CORPUS's words that "
              "reach --min-count to the model's vocabulary, each as a new leaf of its tree (old "
              "words keep their vectors and codes).")
@click.option("--count-memory", metavar="SIZE", help=COUNT_MEMORY_HELP)
@_settings("engine", "scheduler", "workers", "round_words")
@click.option("--quiet", is_flag=True, help="No progress bar or summary.")
@click.pass_context
def train(ctx: click.Context, corpus: tuple[str, ...], output: str | None,
          vector_format: str | None, binary: bool,
          cache: bool, save_model: str | None, tree: str | None, tree_from: str | None,
          read_vocab: str | None, checkpoint: str | None, checkpoint_every: float,
          resume: str | None, init_model: str | None, grow: bool, count_memory: str | None,
          engine: str,
          scheduler: str | None, workers: int | None, round_words: int | None, quiet: bool,
          **settings) -> None:
    """Train word vectors on CORPUS with hierarchical softmax.

    CORPUS: one or more files, directories (read recursively, in sorted order) or
    quoted globs of plain, .gz, .bz2 or .zst UTF-8 text, URLs, or - for stdin. Words are
    split on whitespace; a newline or the end of a file ends a sentence. Without -o
    or --save-model, the vectors go to vectors.txt and the model to model.npz in
    the current directory.
    """
    from .api import train_with
    from .counting.vocab import Vocab
    from .model.reading import load_model
    from .model.vectors_cache import cache_limit, write_cache
    from .system.files import check_distinct, check_writable, replace_together
    from .text.reader import corpus_files, describe
    from .trees.registry import tree_for

    chosen = bool(output or save_model or resume)
    output, save_model, vector_format = _train_outputs(output, save_model, vector_format, binary,
                                                       resume, checkpoint)
    in_place = _in_place(save_model, init_model) if not chosen else None
    settings["tree"] = tree_for(tree, bool(tree_from))
    _check_starts(tree_from, read_vocab, init_model, resume, grow)
    if not (resume or init_model):  # (those keep the saved model's kind: checked with it)
        _check_settings(settings, engine)
    if cache:
        cache_limit()  # (and on a bad HSW2V_CACHE_SIZE)
    if resume or init_model:  # only the settings given here change the saved ones
        settings = {k: v for k, v in settings.items()
                    if ctx.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE
                    or k == "tree" and tree}
    outputs = {"-o": output, "--save-model": save_model, "--checkpoint": checkpoint}
    files = corpus_files(corpus, exclude=[p for p in outputs.values() if p])
    check_distinct(outputs, {"corpus": _named_files(corpus), "--read-vocab": [read_vocab],
                             "--tree-from": [tree_from],
                             "--init-model": [None if in_place else init_model]})
    check_distinct({"-o": output, "--save-model": save_model}, {"--resume": [resume]})
    for path in outputs.values():
        if path:
            check_writable(path)
    _say_directories(corpus, files, quiet)
    replaced = {p for p in (output, save_model) if p and os.path.exists(p) and not _special_file(p)}
    start = time.perf_counter()
    model = train_with(files, settings,
                       vocab=Vocab.load(read_vocab) if read_vocab else None,
                       tree_from=load_model(tree_from) if tree_from else None, progress=not quiet,
                       init_model=load_model(init_model) if init_model else None, resume=resume,
                       checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                       count_memory=parse_size(count_memory, "count_memory"), engine=engine,
                       **({"grow": True} if grow else {}),
                       scheduler=scheduler, workers=workers, round_words=round_words,
                       **({"checkpoint_outputs": {"-o": output, "--save-model": save_model,
                                                  "--format": vector_format}}
                          if checkpoint else {}))
    seconds = time.perf_counter() - start
    writers = {output: lambda f: model.write_vectors(f, format=vector_format),
               save_model: model.write}
    replace_together({k: v for k, v in writers.items() if k})  # both outputs, or neither
    if output and cache and vector_format_named(vector_format).write_rows is not None:
        write_cache(output, model.words, model.word_vectors)
    if not quiet:
        _say_trained(model, seconds, output, save_model, replaced, describe(files), in_place,
                     grown_from=len(model.history[-1]["words"]) if grow else None)


def _train_outputs(output: str | None, save_model: str | None, vector_format: str | None,
                   binary: bool, resume: str | None, checkpoint: str | None = None
                   ) -> tuple[str | None, str | None, str]:
    """Where ``train`` writes, and the vectors' format: as given; for ``--resume``
    without either, the resumed run's own; else the format's default files here.
    ``-`` is refused with the reason (elsewhere it is a standard stream)."""
    for option, path in (("-o", output), ("--save-model", save_model), ("--checkpoint", checkpoint)):
        if path == "-":
            raise HSW2VError(f"{option} -: train writes files, not standard output (the vectors "
                             "and the model are replaced together at the end); give a path")
    if resume and not output and not save_model and os.path.isfile(resume):
        from .runs.checkpoint import checkpoint_outputs

        saved = checkpoint_outputs(resume)  # the resumed run's own outputs
        output, save_model = saved.get("-o"), saved.get("--save-model")
        vector_format = vector_format or saved.get("--format") or (
            "binary" if saved.get("--binary") is not None else None)  # (older checkpoints)
    if binary and vector_format not in (None, "binary"):
        raise HSW2VError(f"--binary is --format binary: not with --format {vector_format}")
    chosen = vector_format_named(vector_format or ("binary" if binary else "text"))
    if not output and not save_model:
        output, save_model = chosen.default_file, DEFAULT_MODEL
        check_default_output(output, "vectors")
        check_default_output(save_model, "model")
    return output, save_model, chosen.name


def _check_starts(tree_from: str | None, read_vocab: str | None, init_model: str | None,
                  resume: str | None, grow: bool) -> None:
    """Refuse, in one line, the options a run cannot start from together."""
    if tree_from and read_vocab:
        raise HSW2VError("--tree-from uses that model's vocabulary; drop --read-vocab")
    starts = [f"--{k}" for k, v in [("tree-from", tree_from), ("read-vocab", read_vocab),
                                    ("init-model", init_model), ("resume", resume)] if v]
    if len(starts) > 1:
        raise HSW2VError(f"{' and '.join(starts)} do not go together")
    if grow and not init_model:
        raise HSW2VError("--grow grows the vocabulary of --init-model: give the model")


def _in_place(save_model: str | None, init_model: str | None) -> str | None:
    """With no -o or --save-model given, the model that ``--init-model`` names if it is
    the default ``--save-model`` (``train new.txt --init-model model.npz``): trained
    further in place. It is read whole before training and replaced only once
    training ends, atomically with the vectors."""
    from .system.files import same_file

    return save_model if save_model and init_model and same_file(save_model, init_model) else None


def _check_settings(settings: dict, engine: str) -> None:
    """Fail on bad options before reading anything: the settings resolved as the
    engine will resolve them (its warnings, said when it runs, left out here)."""
    from .runs.resolve import run_settings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HSW2VWarning)
        run_settings(settings, engine)


def _say_trained(model, seconds: float, output: str | None, save_model: str | None,
                 replaced: set[str], corpus: str, in_place: str | None = None,
                 grown_from: int | None = None) -> None:
    """``train``'s closing lines: the run's size, time (each stage's, and the
    compile's apart) and losses; the words added (``--grow``) and skipped; the
    files written or replaced (the model trained further in place, ``in_place``)."""
    from .trees.registry import tree_builders

    losses = ", ".join(f"{x:.4f}" for x in model.epoch_loss)
    took = getattr(model, "seconds", {})
    compiling = took.get("compile", 0.0)
    extra = f" (and {compiling:.1f} s compiling)" if compiling >= 0.05 else ""
    stages = (f": a first pass of {model.settings.tree_epochs} epoch"
              f"{'s' * (model.settings.tree_epochs > 1)} on a "
              f"{tree_builders[model.settings.tree].first_pass.capitalize()} tree "
              f"{took['first_pass']:.1f} s, the {model.tree.kind} tree learned from it "
              f"{took['tree']:.1f} s, then {model.settings.epochs} epochs on it "
              f"{took['train']:.1f} s" if "first_pass" in took else "")
    click.echo(f"{len(model.vocab)} words x {model.dim} dims in {seconds - compiling:.1f} s"
               f"{extra}{stages}; mean -log P per epoch: {losses}", err=True)
    if grown_from is not None:
        click.echo(f"grew the vocabulary by {grown_from} word{'s' * (grown_from != 1)}, from "
                   f"{len(model.vocab) - grown_from} to {len(model.vocab)}", err=True)
    if model.skipped:
        click.echo(f"{model.skipped['tokens']} tokens ({model.skipped['types']} types) of "
                   f"{corpus} are not in the model's vocabulary and were skipped", err=True)
    written = [f"vectors to {output}"] if output else []
    written += [f"model to {save_model}"] if save_model else []
    written = [w + (" (trained further and replaced)" if in_place and w.endswith(f" to {in_place}")
                    else " (replaced)" * (w.split(" to ", 1)[1] in replaced)) for w in written]
    click.echo(f"saved {' and '.join(written)}", err=True)


@cli.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--vectors", "vectors_path",
              help="word2vec text or binary file, or an hsw2v model (.npz) "
              "[the newest of " + " and ".join(f.default_file for f in vector_formats.values()
                                               if f.write_rows is not None)
              + f" here, else {DEFAULT_MODEL}].")
@click.option("-n", "topn", default=10, show_default=True, help="How many neighbours.")
@click.option("--negative", multiple=True,
              help="Subtract this word (repeat for more): king --negative man woman.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {word, similarity}.")
def similar(words: tuple[str, ...], vectors_path: str | None, topn: int, negative: tuple[str, ...],
            as_json: bool) -> None:
    """Print the cosine nearest neighbours of WORDS (summed), minus --negative words.

    With positive and negative words this answers analogies, as gensim's
    most_similar does: similar king woman --negative man.
    """
    from .model.reading import load_model, read_vectors
    from .model.vectors_cache import cache_limit

    if topn <= 0:
        raise HSW2VError(f"-n must be positive, got {topn}")
    cache_limit()  # (a bad HSW2V_CACHE_SIZE is one line, not a cache silently off)
    path = vectors_path or default_vectors()
    vectors = read_vectors(path, make_cache=True)
    unseen = [w for w in (*words, *negative) if w not in vectors]
    if unseen and vectors.unseen is None and vectors_path is None and path != DEFAULT_MODEL \
            and os.path.isfile(DEFAULT_MODEL):  # (the model beside them may have subwords)
        model = load_model(DEFAULT_MODEL)
        if model.ngram_vectors is not None:
            vectors = model.keyed_vectors()
    for w in unseen:
        if vectors.unseen is not None and vectors.unseen(w) is not None:
            click.echo(f"hsw2v: {w!r} is not in the vocabulary: its vector is built from its "
                       "character n-grams", err=True)
    result = vectors.most_similar(list(words), list(negative), topn)
    _emit([{"word": w, "similarity": s} for w, s in result], as_json,
          (f"{w}\t{s:.4f}" for w, s in result))


@cli.command("example-corpus")
@click.option("-o", "--output", help="Write it to this file instead of stdout.")
def example_corpus(output: str | None) -> None:
    """Write the bundled corpus as text: the first million words of English
    Wikipedia, cleaned like text8, a line every 1,000 words (5.7 MB; CC BY-SA 3.0,
    see the package's hsw2v/datasets/README.md). The Quick start trains on it:

    hsw2v example-corpus > corpus.txt
    """
    from .datasets import write_enwiki_1m
    from .system.files import atomic_write, check_writable

    if output and output != "-":
        check_writable(output)
        with atomic_write(output, "wb") as f:
            write_enwiki_1m(f)
        return
    try:
        write_enwiki_1m(sys.stdout.buffer)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@cli.command("tree")
@click.argument("model_path", metavar="[MODEL]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--plot", metavar="FILE", help="Also draw the top levels to FILE (.png, .svg, "
              ".pdf; pip install matplotlib), each node with its most frequent words.")
@click.option("--levels", default=4, show_default=True, help="Levels drawn by --plot.")
@click.option("--words", default=3, show_default=True,
              help="Words on each node drawn; new words shown for each growth of a grown model.")
def tree_info(model_path: str | None, as_json: bool, plot: str | None, levels: int, words: int) -> None:
    """Print the shape of a model's tree: kind, depth, mean path lengths (all of a
    word's codes summed), codes per word, for a WordNet tree the share of words
    and tokens WordNet covers, and for a model grown by --grow where the most
    frequent new words went (--words of each growth).

    MODEL defaults to model.npz in the current directory."""
    from .model.reading import load_model
    from .trees.plot import (
        plot_tree,  # (matplotlib itself is imported only to draw)
    )

    if words < 0 or levels < 1:  # (a negative count would slice from the end)
        raise HSW2VError(f"--words must be 0 or more, got {words}" if words < 0
                         else f"--levels must be 1 or more, got {levels}")
    model = load_model(model_path or default_model("a MODEL path"))
    if plot:
        plot_tree(model.tree, plot, levels, words, vectors=model)
        click.echo(f"saved the top {levels} levels of the tree to {plot}", err=True)
    info = model.tree.summary(model.vocab.counts)
    if model.history:
        info["grown"] = _growths(model, words)
    _emit(info, as_json, [
        f"tree: {info['kind']}, {info['words']} words", f"depth: {info['depth']}",
        f"mean path length: {info['mean_path_length']:.3f}",
        f"frequency-weighted mean path length: {info['weighted_mean_path_length']:.3f}",
        f"codes per word: {info['codes_per_word']:.3f} mean, {info['max_codes']} most",
        *([(f"covered by {info['kind']}: {info['covered_words']} words "
            f"({info['covered_word_share']:.1%}), {info['covered_token_share']:.1%} of tokens")]
          if "covered_word_share" in info else []),
        *(line for g in info.get("grown", []) for line in [
            f"grown from {g['from_words']} words by {g['added']}" + (
                "; the most frequent new words went beside:" if g["placed"] else ""),
            *(f"  {p['word']} beside {p['beside']} (depth {p['depth']})" for p in g["placed"])])])


def _growths(model, shown: int) -> list[dict]:
    """Each growth of ``model``'s vocabulary, with where its ``shown`` most frequent new
    words went: the word whose leaf each split, and its depth."""
    from .trees.grow import split_leaf

    index, depths, out = model.vocab.index, model.tree.depths, []
    for growth in model.history:
        ids = sorted(index[w] for w in growth["words"])[:shown]
        out.append({"from_words": growth["from_words"], "added": len(growth["words"]),
                    "placed": [{"word": model.vocab.words[i],
                                "beside": model.vocab.words[split_leaf(model.tree, i)],
                                "depth": int(depths[i])} for i in ids]})
    return out


@cli.command()
@click.argument("context", nargs=-1, required=True)
@click.option("--model", "model_path",
              help=f"A model saved by hsw2v train [{DEFAULT_MODEL}].")
@click.option("-n", "topn", default=10, show_default=True, help="How many words.")
@click.option("--json", "as_json", is_flag=True, help='Print a JSON list of {"word", "prob"}.')
def predict(context: tuple[str, ...], model_path: str | None, topn: int, as_json: bool) -> None:
    """Print the N most probable words given the CONTEXT words, with probabilities.

    Exact: a best-first search over the tree returns words in order of probability.
    CBOW uses the mean (or sum) of the context vectors, as in training; skip-gram
    multiplies P(word | c) over the context words c, so with several context words
    its scores are products of probabilities, small and not summing to 1 (a line on
    stderr says so). LBL takes the preceding words
    in order, the last nearest, and predicts the next: from the last --window of
    them, with the start of a line before fewer. Unknown context words are
    skipped with a warning.
    """
    from .model.reading import load_model
    from .training.kinds import model_kind

    if topn <= 0:
        raise HSW2VError(f"-n must be positive, got {topn}")
    model = load_model(model_path or default_model())
    with CompileWatch(True), about(f"the {model.arch} prediction kernels for dim {model.dim}"):
        result = model.predict(list(context), topn)  # unknown words: a warning line each
    known = sum(w in model for w in context)
    if model_kind(model.arch).examples_per_context_word and known > 1 and not as_json:
        click.echo(f"# {model.arch}: each score is the product of P(word | c) over the {known} "
                   "context words c, not a probability (the scores do not sum to 1)", err=True)
    _emit([{"word": w, "prob": p} for w, p in result], as_json,
          (f"{w}\t{p:.6g}" for w, p in result))


@cli.command()
@click.argument("corpus")
@click.option("--model", "model_path",
              help=f"A model saved by hsw2v train [{DEFAULT_MODEL}].")
@click.option("--window", type=int, help="Context width [the model's training window].")
@click.option("--threads", type=int, help="Blocks scored at once [every core].")
@click.option("--per-line", is_flag=True, help="A language model: write each line's log10 "
              "probability, its tokens (</s> counted) and its OOVs, tab-separated, to stdout as "
              "the text streams; the totals go to stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def score(corpus: str, model_path: str | None, window: int | None, threads: int | None,
          per_line: bool, as_json: bool) -> None:
    """Held-out perplexity of a model on CORPUS.

    A language model (--arch lbl) counts as KenLM's query does: each line ends with
    a predicted </s>, a word outside the vocabulary is <unk>, and the perplexity is
    given with and without the OOVs. The embedding kinds give the mean -log P of
    their examples (skip-gram: each (centre, context) pair; CBOW: each centre word),
    with the window at full width and nothing subsampled, so that two models are
    comparable on the same file; they drop unknown words.
    CORPUS: plain, .gz, .bz2 or .zst UTF-8 text, or - for stdin.
    """
    from .evaluation.scoring import score as run
    from .model.reading import load_model

    model = load_model(model_path or default_model())
    if per_line and not model.vocab.markers:
        raise HSW2VError("--per-line needs a language model whose lines end with </s> "
                         "(one trained with --arch lbl by this version)")
    out = sys.stdout

    def write(line) -> None:
        out.write(f"{line.log10_prob:.6f}\t{line.tokens}\t{line.oov}\n")

    with CompileWatch(True), about(f"the {model.arch} scoring kernels for dim {model.dim}"):
        result = run(model, corpus, window, threads, write if per_line else None)
    if per_line:
        out.flush()
    echo = partial(click.echo, err=per_line)
    if as_json:
        echo(json.dumps(_strict_json(result), allow_nan=False))
    elif model.vocab.markers:
        for line in [
                f"perplexity: {result['perplexity']:.2f} (OOVs included)",
                f"perplexity without OOVs: {result['perplexity_without_oov']:.2f}",
                f"log10 probability: {result['log10_prob']:.4f}",
                f"tokens: {result['tokens']} ({result['lines']} lines, </s> counted), "
                f"OOVs: {result['oov']} (scored as <unk>); {result['arch']}, "
                f"window {result['window']}"]:
            echo(line)
    else:
        for line in [
                f"mean -log P: {result['loss']:.4f} nats",
                f"perplexity: {result['perplexity']:.2f}",
                (f"examples: {result['examples']} ({result['words']} words in the vocabulary, "
                 f"{result['dropped']} unknown dropped; {result['arch']}, window {result['window']})")]:
            echo(line)


@cli.command()
@click.argument("vectors_path", metavar="[VECTORS_OR_MODEL]", required=False)
@click.option("--analogies", help="Analogy questions (questions-words.txt format) [the bundled "
              "Google analogies, word2vec's questions-words.txt, Apache-2.0].")
@click.option("--no-analogies", is_flag=True, help="Skip the analogies: score only the --pairs files.")
@click.option("--pairs", multiple=True, help="Word-pair file of 'word1<TAB>word2<TAB>score' "
              "lines, tab-separated as gensim reads them (repeatable). None is bundled: see "
              "above for where to get WordSim-353 and SimLex-999.")
@click.option("--restrict", default=30000, show_default=True, help="Analogies: search only the N most frequent words.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def evaluate(vectors_path: str | None, analogies: str | None, no_analogies: bool,
             pairs: tuple[str, ...], restrict: int, as_json: bool) -> None:
    """Score vectors on analogies (3CosAdd) and word-pair similarity (Spearman).

    VECTORS_OR_MODEL defaults to the vectors that `hsw2v similar` would read.
    Without --analogies, the questions are the Google analogies that come with
    hsw2v (Mikolov et al. 2013, word2vec's questions-words.txt; Apache-2.0, see
    hsw2v/datasets/README.md in the package). The word-pair sets carry no licence
    that allows bundling them; download them and pass each with --pairs:
    WordSim-353 from http://gabrilovich.com/resources/data/wordsim353/wordsim353.html
    and SimLex-999 from https://fh295.github.io/simlex.html (the README says how
    to make their three-column files)."""
    from .datasets import google_analogies
    from .evaluation.evaluate import (
        evaluate_analogies,
        evaluate_word_pairs,
        report_lines,
    )
    from .model.reading import read_vectors

    if no_analogies and analogies:
        raise HSW2VError("give --analogies FILE or --no-analogies, not both")
    if no_analogies and not pairs:
        raise HSW2VError("--no-analogies leaves nothing to score: give --pairs FILE")
    if restrict <= 0:
        raise HSW2VError(f"--restrict must be positive, got {restrict}")
    vectors = read_vectors(vectors_path or default_vectors())
    questions = None if no_analogies else analogies or google_analogies()
    report = {"analogies": evaluate_analogies(vectors, questions, restrict=restrict)} if questions else {}
    report["pairs"] = {p: evaluate_word_pairs(vectors, p) for p in pairs}
    _emit(report, as_json, report_lines(report))
