-- OAuth 2.1 for MCP clients (docs/mcp.md, "OAuth"): everything the
-- authorization server remembers lives here, so that any number of
-- stateless servers share it. Secrets are stored as SHA-256 hashes only.
--
-- oauth_keys: the one key (id 1) that seals access tokens and codes
-- (AES-256-GCM, zitadel/oidc's op.Crypto). The primary key is the race's
-- arbiter: two servers starting at once insert it, one wins, both read it.
CREATE TABLE oauth_keys (
    id          BIGINT      PRIMARY KEY,
    crypto_key  BLOB        NOT NULL,
    created_at  DATETIME    NOT NULL
);
-- oauth_clients: clients the operator registered (parley oauth client
-- add). A client whose client_id is an HTTPS URL needs no row: its
-- metadata document is fetched when it asks.
CREATE TABLE oauth_clients (
    client_id     TEXT        PRIMARY KEY,
    name          TEXT        NOT NULL,
    redirect_uris TEXT        NOT NULL,
    created_at    DATETIME    NOT NULL
);
-- oauth_requests: an authorization request, from /oauth/authorize to the
-- code's exchange. A human's consent fills token_id (the Parley token the
-- grant became) and rights; the code is stored as its hash.
CREATE TABLE oauth_requests (
    id             TEXT        PRIMARY KEY,
    client_id      TEXT        NOT NULL,
    client_name    TEXT        NOT NULL,
    redirect_uri   TEXT        NOT NULL,
    state          TEXT        NOT NULL,
    scopes         TEXT        NOT NULL,
    code_challenge TEXT        NOT NULL,
    resource       TEXT        NOT NULL,
    token_id       BIGINT      REFERENCES tokens (id),
    code_hash      BLOB,
    approved_at    DATETIME,
    created_at     DATETIME    NOT NULL,
    expires_at     DATETIME    NOT NULL
);
CREATE UNIQUE INDEX oauth_requests_code ON oauth_requests (code_hash);
-- oauth_access and oauth_refresh: the tokens a grant hands out, each bound
-- to its Parley token, its client and the resource it was issued for.
-- Revoking the Parley token deletes both (services.RevokeToken).
CREATE TABLE oauth_access (
    hash        BLOB        PRIMARY KEY,
    token_id    BIGINT      NOT NULL REFERENCES tokens (id),
    client_id   TEXT        NOT NULL,
    resource    TEXT        NOT NULL,
    scopes      TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL,
    expires_at  DATETIME    NOT NULL
);
CREATE INDEX oauth_access_token ON oauth_access (token_id);
CREATE TABLE oauth_refresh (
    hash        BLOB        PRIMARY KEY,
    token_id    BIGINT      NOT NULL REFERENCES tokens (id),
    client_id   TEXT        NOT NULL,
    resource    TEXT        NOT NULL,
    scopes      TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL,
    expires_at  DATETIME    NOT NULL
);
CREATE INDEX oauth_refresh_token ON oauth_refresh (token_id);
