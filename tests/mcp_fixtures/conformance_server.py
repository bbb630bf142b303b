"""A stdio MCP server with the fixtures the official conformance suite's server scenarios ask for.

The suite (``@modelcontextprotocol/conformance``) tests a server by calling tools, reading resources
and getting prompts with fixed names (``test_simple_text``, ``test://static-text``,
``test_simple_prompt``, …), each described in the scenario's "Server Implementation Requirements".
Behind ``harness serve --http`` this server lets the suite check what the proxy passes on: every
content type, errors, progress, resources, templates and prompts (tests/test_proxy_conformance.py).
Written from those descriptions with the SDK's low-level ``Server``, so each reply is exactly as specified.
"""
from __future__ import annotations

import asyncio
import base64
import json
import re

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="  # 1x1 red
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00\x01\x00"
                       b"\x08\x00data\x00\x00\x00\x00").decode()
EMPTY = {"type": "object", "properties": {}}
TOOLS = {
    "test_simple_text": "Return a simple text.",
    "test_image_content": "Return a one-pixel PNG image.",
    "test_audio_content": "Return a short WAV sound.",
    "test_embedded_resource": "Return an embedded text resource.",
    "test_multiple_content_types": "Return text, an image and an embedded resource.",
    "test_error_handling": "Always fail, as an error result.",
    "test_tool_with_progress": "Report progress 0, 50 and 100 of 100, then finish.",
}
TEMPLATE = re.compile(r"test://template/([^/]+)/data\Z")


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=n, description=d, input_schema=EMPTY) for n, d in TOOLS.items()])


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    image = types.ImageContent(type="image", data=PNG, mime_type="image/png")
    content = {
        "test_simple_text": [text("This is a simple text response for testing.")],
        "test_image_content": [image],
        "test_audio_content": [types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")],
        "test_embedded_resource": [types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."))],
        "test_multiple_content_types": [text("Multiple content types test:"), image, types.EmbeddedResource(
            type="resource", resource=types.TextResourceContents(uri="test://mixed-content-resource", mime_type="application/json",
                                                                 text=json.dumps({"test": "data", "value": 123})))],
    }
    if params.name == "test_error_handling":
        return types.CallToolResult(content=[text("This tool intentionally returns an error for testing")], is_error=True)
    if params.name == "test_tool_with_progress":
        for done in (0, 50, 100):
            await ctx.session.report_progress(done, 100)
            await asyncio.sleep(0.05)
        return types.CallToolResult(content=[text("Progress reported: 0, 50, 100 of 100.")])
    if params.name not in content:
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool {params.name}")
    return types.CallToolResult(content=content[params.name])


async def list_resources(ctx, params) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[
        types.Resource(uri="test://static-text", name="static-text", mime_type="text/plain", description="A static text."),
        types.Resource(uri="test://static-binary", name="static-binary", mime_type="image/png", description="A static PNG."),
    ])


async def list_templates(ctx, params) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
        uri_template="test://template/{id}/data", name="template-data", mime_type="application/json",
        description="Data for an id.")])


async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == "test://static-text":
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource.")]
    elif uri == "test://static-binary":
        contents = [types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)]
    elif match := TEMPLATE.match(uri):
        data = {"id": match.group(1), "templateTest": True, "data": f"Data for ID: {match.group(1)}"}
        contents = [types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))]
    else:
        raise MCPError(-32002, f"Resource not found: {uri}", {"uri": uri})
    return types.ReadResourceResult(contents=contents)


PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A simple prompt."),
    types.Prompt(name="test_prompt_with_arguments", description="A prompt with two arguments.", arguments=[
        types.PromptArgument(name="arg1", description="First test argument", required=True),
        types.PromptArgument(name="arg2", description="Second test argument", required=True)]),
    types.Prompt(name="test_prompt_with_embedded_resource", description="A prompt embedding a resource.", arguments=[
        types.PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)]),
    types.Prompt(name="test_prompt_with_image", description="A prompt with an image."),
]


async def list_prompts(ctx, params) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = params.arguments or {}

    def user(content) -> types.PromptMessage:
        return types.PromptMessage(role="user", content=content)

    messages = {
        "test_simple_prompt": [user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments": [user(text(f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"))],
        "test_prompt_with_embedded_resource": [
            user(types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                uri=args.get("resourceUri", "test://example-resource"), mime_type="text/plain",
                text="Embedded resource content for testing."))),
            user(text("Please process the embedded resource above."))],
        "test_prompt_with_image": [user(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
                                   user(text("Please analyze the image above."))],
    }
    if params.name not in messages:
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {params.name}")
    return types.GetPromptResult(messages=messages[params.name])


async def main() -> None:
    server = Server("conformance-fixtures", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                    on_list_resources=list_resources, on_list_resource_templates=list_templates,
                    on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
