-- People who sign in through the identity provider, their dashboard sessions, and the OAuth 2.0
-- authorization server for agents: registered clients, authorization codes and mca_ access tokens.
-- Every secret (session cookie, code, token) is stored as a SHA-256 hash only.

-- One row per identity-provider subject; each user belongs to one account (a new subject gets a new
-- free account).
CREATE TABLE users (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  issuer         text NOT NULL,
  subject        text NOT NULL,
  email          text NOT NULL DEFAULT '',
  name           text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_login_at  timestamptz,
  UNIQUE (issuer, subject)
);
CREATE INDEX users_account ON users (account_id);

CREATE TABLE user_sessions (
  id          text PRIMARY KEY,
  token_hash  text NOT NULL UNIQUE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  -- Anti-CSRF token for forms and dashboard POSTs; random, not a secret beyond this session.
  csrf_token  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

-- RFC 7591 public clients: no secret, token_endpoint_auth_method none.
CREATE TABLE oauth_clients (
  id             text PRIMARY KEY,
  client_name    text NOT NULL,
  redirect_uris  jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_codes (
  code_hash       text PRIMARY KEY,
  client_id       text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri    text NOT NULL,
  code_challenge  text NOT NULL,
  resource        text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- An agent, as the settings page shows it, is the set of tokens one client obtained for one account.
CREATE TABLE oauth_tokens (
  id            text PRIMARY KEY,
  token_hash    text NOT NULL UNIQUE,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  client_id     text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
  -- The client's name when the token was issued: the settings list names the agent by it.
  client_name   text NOT NULL,
  -- The code it was exchanged for, so a replayed code can revoke what it issued.
  code_hash     text NOT NULL,
  resource      text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX oauth_tokens_account_client ON oauth_tokens (account_id, client_id);
CREATE INDEX oauth_tokens_code ON oauth_tokens (code_hash);
