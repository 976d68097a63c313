"""Cline's hooks: one executable per hook under ``.clinerules/hooks/``, named after it
(Cline matches the file name without its extension, case-insensitively); each runs
``lanes guard --agent cline``. Two contracts share those files:

**Cline 3 (the ``cline`` CLI and SDK, ``@cline/core``).** The file names map to events
(``@cline/core`` ``dist/index.js``: ``TaskStart`` → ``agent_start``, ``TaskResume`` →
``agent_resume``, ``PreToolUse`` → ``tool_call``, ``PostToolUse`` → ``tool_result``,
``UserPromptSubmit`` → ``prompt_submit``, ``TaskComplete`` → ``agent_end``, ``TaskCancel``
→ ``agent_abort``, ``SessionShutdown`` → ``session_shutdown``), and ``hookName`` carries
the new name. Its tools are ``editor`` (``path``, ``old_text``, ``new_text``,
``insert_line``), ``apply_patch`` (``input``: the patch), ``run_commands`` (``commands``:
a list) and ``read_files`` (``files: [{path}]``), in ``tool_call.input``
(``preToolUse.parameters`` holds the same values as JSON strings).

- Only ``tool_call`` and ``tool_result`` wait for the hook and read its answer; the CLI
  runs the others detached with their output ignored (``blockingRunStartHooks`` is off
  and nothing turns it on). So ``agent_start`` checks in and keeps who-is-live for the
  next tool event's context (``core.start_marked``), and a tool event that comes before
  that check-in has finished waits for it briefly, then checks in itself
  (``core.ensure_started``).
- A refusal: ``{"cancel": true}`` would stop the whole run, so the refused call's input
  is replaced by one its tool's own schema rejects (``overrideInput: {}``: the call fails
  and changes nothing) and the reason goes to the model as ``contextModification``, which
  Cline adds to the conversation right after the failed call's result. The run goes on.
- ``tool_result``: the files a write or command changed are noted, their edits sent
  within a second (``agentlanes.hooks.edits``); the agent's news as
  ``contextModification``.
- ``agent_end`` / ``agent_abort`` / ``session_shutdown``: the edits still waiting are
  sent, then check out (the keepalive does it too when the ``cline`` process ends).

**The Cline extension's hooks** (https://docs.cline.bot/features/hooks/hook-reference):
``hookName`` ``TaskStart`` …, ``preToolUse: {toolName, parameters}`` with the tools
``write_to_file``, ``replace_in_file``, ``execute_command``; a refusal there is
``{"cancel": true, "errorMessage"}``, which cancels only that call.

The agent is ``cline-<taskId>``."""

from __future__ import annotations

import json

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {"cancel": False}  # the answer when the guard cannot tell
AGENT = "cline"
HOOKS = ("TaskStart", "TaskResume", "PreToolUse", "PostToolUse", "UserPromptSubmit",
         "TaskComplete", "TaskCancel", "SessionShutdown")  # fmt: skip
# Each event by its Cline 3 name and by the extension's.
STARTS = frozenset({"agent_start", "agent_resume", "TaskStart", "TaskResume"})
ENDS = frozenset({"agent_end", "agent_abort", "session_shutdown", "TaskComplete", "TaskCancel"})
BEFORE = frozenset({"tool_call", "PreToolUse"})
AFTER = frozenset({"tool_result", "PostToolUse"})
PROMPT = frozenset({"prompt_submit", "UserPromptSubmit"})
NEW_NAMES = frozenset(
    {"agent_start", "agent_resume", "agent_end", "agent_abort", "session_shutdown",
     "tool_call", "tool_result", "prompt_submit"}
)  # fmt: skip
FILE_TOOLS = frozenset({"write_to_file", "replace_in_file", "new_rule", "editor"})
SHELL_TOOLS = frozenset({"execute_command", "run_commands"})
PATCH_TOOLS = frozenset({"apply_patch"})
READ_TOOLS = frozenset({"read_file", "read_files"})


def _go(context: str | None = None) -> dict[str, Any]:
    return {"cancel": False, "contextModification": context} if context else {"cancel": False}


def _input(payload: dict[str, Any], new_key: str, old_key: str) -> tuple[Any, dict[str, Any]]:
    """(tool name, its arguments) of a tool event: Cline 3's ``tool_call`` /
    ``tool_result`` object (the real values), else the ``preToolUse`` / ``postToolUse``
    one (Cline 3 writes the values there as JSON strings; the extension as they are)."""
    new = payload.get(new_key)
    if isinstance(new, dict) and new.get("name"):
        args = new.get("input")
        return new.get("name"), args if isinstance(args, dict) else {"input": args}
    old = payload.get(old_key)
    old = old if isinstance(old, dict) else {}
    params = old.get("parameters")
    return old.get("toolName"), dict(params) if isinstance(params, dict) else {}


def _calls(tool: Any, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool call in Claude Code's terms (``core.file_call``): one per file a read
    names, one for anything else; empty for a tool that neither reads nor changes files."""
    if tool == "run_commands":
        commands = args.get("commands")
        if isinstance(commands, str):  # a JSON string (preToolUse) or one command
            try:
                commands = json.loads(commands)
            except ValueError:
                commands = [commands]
        if isinstance(commands, list):
            args = {"command": "\n".join(str(c) for c in commands)}
    if tool == "editor":
        args = _editor(args)
        tool = "write_to_file" if args.pop("whole", False) else "replace_in_file"
    if tool == "read_files":
        files = args.get("files")
        if isinstance(files, str):
            try:
                files = json.loads(files)
            except ValueError:
                files = []
        paths = [f.get("path") for f in files or [] if isinstance(f, dict)]
        return [("Read", {"file_path": p}) for p in paths if isinstance(p, str) and p]
    call = core.file_call(
        tool,
        args,
        file_tools=FILE_TOOLS,
        shell_tools=SHELL_TOOLS,
        patch_tools=PATCH_TOOLS,
        path_keys=("path", "file_path"),
    )
    if call is None and tool in READ_TOOLS and isinstance(args.get("path"), str):
        return [("Read", {"file_path": args["path"]})]
    return [call] if call else []


def _call(call: Any) -> tuple[str, dict[str, Any]] | None:
    """The first of ``_calls`` for the extension's ``{toolName, parameters}`` object."""
    call = call if isinstance(call, dict) else {}
    params = call.get("parameters")
    found = _calls(call.get("toolName"), dict(params) if isinstance(params, dict) else {})
    return found[0] if found else None


def _editor(args: dict[str, Any]) -> dict[str, Any]:
    """Cline 3's ``editor`` in the terms ``core.file_call`` reads: ``old_text`` →
    ``new_text`` is an anchored edit; no ``old_text`` and no ``insert_line`` creates the
    file (``whole``: a whole-file write); ``insert_line`` an edit of unknown lines."""
    old, new = args.get("old_text"), args.get("new_text")
    out: dict[str, Any] = {"path": args.get("path")}
    if isinstance(old, str) and isinstance(new, str):
        out.update(old_string=old, new_string=new)
    elif args.get("insert_line") is None and isinstance(new, str):
        out["content"] = new
        out["whole"] = True
    return out


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = payload.get("hookName") or event
    sid, cwd = payload.get("taskId"), core.first_root(payload.get("workspaceRoots"))
    cline3 = name in NEW_NAMES
    if name in STARTS:
        if cline3:  # its output is not read: the next tool event carries the text
            core.start_marked(AGENT, sid, cwd)
            return Answer(_go())
        return Answer(_go(core.start(AGENT, sid, cwd)))
    if name in ENDS:
        core.end(AGENT, sid, cwd)
        return Answer(_go())
    if name in BEFORE:
        return _before(payload, sid, cwd, cline3)
    if name in AFTER:
        notes = [core.ensure_started(AGENT, sid, cwd)] if cline3 else []
        tool, args = _input(payload, "tool_result", "postToolUse")
        for call in _calls(tool, args):
            if call[0] != "Read":
                core.edited(AGENT, sid, cwd, *call)
        notes.append(core.news(AGENT, sid, cwd))
        return Answer(_go("\n".join(n for n in notes if n) or None))
    if name in PROMPT:
        return Answer(_go(core.news(AGENT, sid, cwd)))
    return Answer(_go())


def _before(payload: dict[str, Any], sid: Any, cwd: Any, cline3: bool) -> Answer:
    notes = [core.ensure_started(AGENT, sid, cwd)] if cline3 else []
    tool, args = _input(payload, "tool_call", "preToolUse")
    for call in _calls(tool, args):  # reads, searches: never refused (a read is only noted)
        verdict = core.check(AGENT, sid, cwd, *call)
        if verdict.deny:
            if not cline3:
                return Answer({"cancel": True, "errorMessage": verdict.deny})
            # Not ``cancel``: that would stop the whole run. An input the tool refuses.
            reason = "\n".join(n for n in [*notes, verdict.deny] if n)
            return Answer({"cancel": False, "overrideInput": {}, "contextModification": reason})
        notes.append(verdict.context)
    return Answer(_go("\n".join(n for n in notes if n) or None))
