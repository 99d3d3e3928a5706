-- post_mcp.lua: posts over MCP, Streamable HTTP (POST /mcp, tools/call
-- post), as a stateless client: no initialize, no session, each request
-- with its bearer token; see post.lua.
function format_request(token, note, n)
  return wrk.format("POST", "/mcp",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream" },
    string.format('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"post","arguments":%s}}', n, note))
end

-- a refusal is a tool result with isError, or an HTTP error
function refused(status, body)
  return status ~= 200 or body:find('"isError":true', 1, true) ~= nil
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post.lua")
