-- post_http.lua: posts over the JSON API (POST /api/v1/messages); see post.lua.
function format_request(token, note, n)
  return wrk.format("POST", "/api/v1/messages",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, note)
end

-- a post is answered 201; anything else is a refusal
function refused(status, body) return status ~= 201 end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "post.lua")
