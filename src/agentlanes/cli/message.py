"""``lanes message send | inbox | read``: talk to the other agents from a shell.

They act as the local agent's session, like ``status`` (``--agent``, else the agent that
started this process, ``AGENTLANES_AGENT_NAME`` or the only session here): an agent
denied an edit reads ``lanes message send alice "..."`` in the reason and can run it.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json, table
from agentlanes.domain.words import clean, clean_lines

AGENT_HELP = "which local agent you are (default: the one that started this shell)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("message", help="messages to and from the other agents")
    msub = p.add_subparsers(dest="message_command", metavar="ACTION")
    msub.required = True

    s = msub.add_parser("send", help="send a message to an agent (or broadcast)")
    s.add_argument(
        "to",
        help="the agent's name or display name (claude-1; see lanes status), "
        "or `broadcast` for every agent",
    )
    s.add_argument("text", nargs="+", help="the message")
    s.add_argument("--type", help="handoff, question, ... (default: message)")
    s.add_argument("--thread", help="a thread id to group a conversation")
    who = s.add_mutually_exclusive_group()
    who.add_argument("--agent", help=AGENT_HELP)
    who.add_argument(
        "--as",
        dest="human",
        metavar="NAME",
        help="speak as a person named NAME, with the project key alone (no agent session); "
        "the message is marked human",
    )
    add_json(s)
    s.set_defaults(func=send)

    i = msub.add_parser("inbox", help="messages to you (and broadcasts), newest last")
    i.add_argument("--unread", action="store_true", help="only the ones not read yet")
    i.add_argument("--limit", type=int, help="at most this many")
    i.add_argument("--agent", help=AGENT_HELP)
    add_json(i)
    i.set_defaults(func=inbox)

    r = msub.add_parser("read", help="show a message and mark it read (--ack: acknowledge it)")
    r.add_argument("message_id", type=int)
    r.add_argument("--ack", action="store_true", help="also acknowledge it")
    r.add_argument("--agent", help=AGENT_HELP)
    add_json(r)
    r.set_defaults(func=read)


def _client(args: argparse.Namespace) -> Any:
    cfg = local_config()
    session = local_session(cfg, args.agent)
    return make_client(cfg, session["session_token"])


def send(args: argparse.Namespace) -> int:
    human = getattr(args, "human", None)
    # A person needs no session: the project key alone (SPEC "Many agents, one working tree").
    client = make_client(local_config()) if human else _client(args)
    with client_errors(), client:
        sent = client.messages.send(
            args.to, " ".join(args.text), type=args.type, thread_id=args.thread, human=human
        )
    if args.json:
        emit_json(sent)
    else:
        whom = sent.get("to")
        shown = f"{args.to} ({whom})" if args.to not in (whom, "broadcast") else whom
        print(
            f"sent message {sent.get('message_id')} to {shown}" + (" as a person" if human else "")
        )
    return 0


def inbox(args: argparse.Namespace) -> int:
    with client_errors(), _client(args) as client:
        box = client.messages.inbox(unread=True if args.unread else None, limit=args.limit)
    if args.json:
        emit_json(box)
        return 0
    messages = box.get("messages") or []
    if not messages:
        print("no messages" + (" unread" if args.unread else ""))
        return 0
    table(
        ("ID", "FROM", "TO", "TYPE", "SENT", "READ", "TEXT"),
        [
            [
                m.get("message_id"),
                m.get("from"),
                m.get("to"),
                m.get("type"),
                m.get("created_at"),
                "yes" if m.get("read_at") else "no",
                _line(m.get("body") or ""),
            ]
            for m in messages
        ],
    )
    return 0


def read(args: argparse.Namespace) -> int:
    with client_errors(), _client(args) as client:
        box = client.messages.read(args.message_id)
        if args.ack:
            box = client.messages.ack(args.message_id)
    if args.json:
        emit_json(box)
        return 0
    message = box.get("message", box) if isinstance(box, dict) else box
    said = (clean(message.get(k)) for k in ("from", "to", "created_at"))
    print("from {} to {} at {}".format(*said))
    if message.get("thread_id"):
        print(f"thread {clean(message['thread_id'])}")
    # Another agent's words, its lines kept: no escapes, nothing unseen.
    for line in clean_lines(message.get("body") or ""):
        print(line)
    return 0


def _line(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
