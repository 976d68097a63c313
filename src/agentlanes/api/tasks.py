"""Tasks and checkpoints over HTTP (the rules: services/coordination/tasks.py, checkpoints.py)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from agentlanes.api.answers import (
    NoteView,
    ReadyTasks,
    TaskDetail,
    TaskList,
    TaskView,
    answer,
)
from agentlanes.api.coordination_schemas import EmptyBody, NoteBody, TaskBody, TaskStatusBody
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_OPTIONAL, SESSION_REQUIRED, contract
from agentlanes.api.query import (
    Flag,
    PageLimit,
    PageOffset,
    bool_param,
    choices,
    page_param,
)
from agentlanes.services.coordination import readiness, tasks

TaskStatus = Annotated[str | None, choices(tasks.STATUSES, "Only tasks in this status")]


class TaskController(Controller):
    path = "/api/v1/tasks"
    tags = ["tasks"]
    guards = [api_key_guard]

    @post(
        "/",
        status_code=201,
        opt=contract(404, session=SESSION_OPTIONAL),
        responses=answer(201, TaskView, "The new task"),
        summary="Create a task",
    )
    async def create(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        data: JSONBody[TaskBody],
    ) -> dict[str, Any]:
        body = data
        return await tasks.create_task(
            ctx,
            project,
            tasks.TaskInput(
                title=body.title,
                description=body.description,
                priority=body.priority,
                paths=body.paths,
                depends_on=body.depends_on,
                parent_id=body.parent_id,
            ),
            session_token(request, body),
        )

    @get(
        "/",
        responses=answer(200, TaskList, "A page of tasks, oldest first"),
        summary="List tasks (filters, pages)",
    )
    async def list_(
        self,
        ctx: Ctx,
        project: Proj,
        status: TaskStatus = None,
        claimed_by: FromQuery[str | None] = None,
        parent_id: FromQuery[str | None] = None,
        stale: Flag = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await tasks.list_tasks(
            ctx,
            project,
            status=status,
            claimed_by=claimed_by,
            parent_id=parent_id,
            stale=bool_param("stale", stale),
            page=page_param(limit, offset),
        )

    @get(
        "/ready",
        opt=contract(session=SESSION_OPTIONAL),
        responses=answer(200, ReadyTasks, "Ready tasks, most urgent first"),
        summary="Tasks ready to claim, most urgent first",
    )
    async def ready(
        self, request: Req, ctx: Ctx, project: Proj, limit: PageLimit = None
    ) -> dict[str, Any]:
        return await readiness.ready_tasks(ctx, project, token=session_token(request), limit=limit)

    @get(
        "/{task_id:str}",
        responses=answer(200, TaskDetail, "The task, its notes and what blocks it"),
        summary="One task, with its notes and what blocks it",
    )
    async def get_(self, ctx: Ctx, project: Proj, task_id: FromPath[str]) -> dict[str, Any]:
        return await tasks.get_task(ctx, project, task_id)

    @post(
        "/{task_id:str}/claim",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, TaskView, "The task, claimed by this session"),
        summary="Claim a task for this session",
    )
    async def claim(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        task_id: FromPath[str],
        data: JSONBody[EmptyBody | None] = None,
    ) -> dict[str, Any]:
        return await tasks.claim_task(ctx, project, task_id, session_token(request, data))

    @post(
        "/{task_id:str}/status",
        status_code=200,
        opt=contract(409, session=SESSION_OPTIONAL),
        responses=answer(200, TaskView, "The task in its new status"),
        summary="Change a task's status",
    )
    async def status(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        task_id: FromPath[str],
        data: JSONBody[TaskStatusBody],
    ) -> dict[str, Any]:
        body = data
        return await tasks.change_status(
            ctx,
            project,
            task_id,
            body.status,
            note=body.note,
            token=session_token(request, body),
        )

    @post(
        "/{task_id:str}/notes",
        status_code=201,
        opt=contract(session=SESSION_OPTIONAL),
        responses=answer(201, NoteView, "The note"),
        summary="Add a note to a task",
    )
    async def note(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        task_id: FromPath[str],
        data: JSONBody[NoteBody],
    ) -> dict[str, Any]:
        body = data
        return await tasks.add_note(ctx, project, task_id, body.body, session_token(request, body))
