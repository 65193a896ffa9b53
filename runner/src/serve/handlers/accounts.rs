//! Signing in and out, signing up, an account's API tokens, and the admin's users page
//! (accept, reject, role, trusted). Who may post here is the accounts guard's business
//! (`serve/accounts/guard.rs`); these handlers check only what is theirs: a password, an
//! admin for `/users`. Each change is recorded in the actions log.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use serde::Deserialize;

use crate::serve::accounts::guard::cookie;
use crate::serve::accounts::{self, Caller, COOKIE, SESSION_SECONDS};
use crate::serve::action_log::{self, Action, Target};
use crate::serve::db::runs::now;
use crate::serve::pages::accounts as page;
use crate::serve::state::Shared;

const NO_ACCOUNTS: &str = "this server has no accounts (one person, no sign-in): its first \
                           admin is made with `spar serve --data-dir DIR --add-admin NAME`";

/// The sign-in and sign-up forms' fields.
#[derive(Deserialize)]
pub struct Credentials {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub password: String,
}

fn internal(e: String) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, e).into_response()
}

/// The `Set-Cookie` value of a session (`token` empty: the cookie removed); `Secure` when
/// the browser talks TLS (`--tls-cert` or `--behind-proxy`).
fn session_cookie(token: &str, secure: bool) -> String {
    let age = if token.is_empty() { 0 } else { SESSION_SECONDS };
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={age}{secure}")
}

/// `GET /login`.
pub async fn login_form(Extension(caller): Extension<Caller>) -> Response {
    let message = (!caller.accounts).then_some(NO_ACCOUNTS);
    Html(page::login("", message)).into_response()
}

/// `POST /login`: a session and its cookie, then the index. Wrong names and passwords are
/// one message; from the fifth failure in a row an account waits longer after each.
pub async fn login(State(st): State<Shared>, Form(f): Form<Credentials>) -> Response {
    let name = f.name.trim().to_string();
    let again = name.clone();
    let secure = st.secure_cookie;
    let outcome = tokio::task::spawn_blocking(move || sign_in(&st, &name, &f.password))
        .await
        .unwrap_or_else(|e| Err((StatusCode::INTERNAL_SERVER_ERROR, e.to_string())));
    match outcome {
        Ok(token) => (
            StatusCode::SEE_OTHER,
            [
                (header::SET_COOKIE, session_cookie(&token, secure)),
                (header::LOCATION, "/".to_string()),
            ],
        )
            .into_response(),
        Err((code, message)) => (code, Html(page::login(&again, Some(&message)))).into_response(),
    }
}

/// Checks a name and password; `Ok`: the new session's token.
fn sign_in(
    st: &crate::serve::state::AppState,
    name: &str,
    password: &str,
) -> Result<String, (StatusCode, String)> {
    let fail = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let (user, accounts) = {
        let db = st.db.lock().expect("db lock");
        (db.user(name).map_err(fail)?, db.has_admin().map_err(fail)?)
    };
    if !accounts {
        return Err((StatusCode::FORBIDDEN, NO_ACCOUNTS.into()));
    }
    let wrong = (
        StatusCode::UNAUTHORIZED,
        "the name or the password is wrong".to_string(),
    );
    let Some(user) = user else {
        // As slow as a real check: a wrong name and a wrong password look the same.
        accounts::verify_password(password, dummy_hash());
        return Err(wrong);
    };
    let wait = user.locked_until - now();
    if wait > 0 {
        return Err((
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many failed sign-ins for {name}: try again in {wait} s"),
        ));
    }
    let ok = accounts::verify_password(password, &user.hash);
    let db = st.db.lock().expect("db lock");
    if let Some(wait) = db.login_outcome(user.id, ok).map_err(fail)? {
        let detail = format!(
            "{} failed sign-ins in a row: locked for {wait} s",
            user.failed_logins + 1
        );
        action_log::record_in(&db, None, Action::Lock, Target::User(name), &detail);
    }
    if !ok {
        return Err(wrong);
    }
    if user.state != "active" {
        return Err((
            StatusCode::FORBIDDEN,
            format!("{name} is waiting for an admin to accept it"),
        ));
    }
    let token = accounts::new_token().map_err(fail)?;
    db.add_session(
        &accounts::token_hash(&token),
        user.id,
        now() + SESSION_SECONDS,
    )
    .map_err(fail)?;
    Ok(token)
}

/// The argon2id hash of a random password: what a wrong name is checked against.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        let random = accounts::new_token().unwrap_or_default();
        accounts::hash_password(&random).unwrap_or_default()
    })
}

/// `POST /logout`: the session deleted (its cookie is dead), the cookie removed.
pub async fn logout(State(st): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(token) = cookie(&headers, COOKIE) {
        let removed = st
            .db
            .lock()
            .expect("db lock")
            .remove_session(&accounts::token_hash(&token));
        if let Err(e) = removed {
            return internal(e);
        }
    }
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, session_cookie("", st.secure_cookie)),
            (header::LOCATION, "/".to_string()),
        ],
    )
        .into_response()
}

/// `GET /signup`.
pub async fn signup_form(Extension(caller): Extension<Caller>) -> Response {
    let message = (!caller.accounts).then_some(NO_ACCOUNTS);
    Html(page::signup("", message, None)).into_response()
}

/// `POST /signup`: a pending account (it signs in once an admin accepts it).
pub async fn signup(State(st): State<Shared>, Form(f): Form<Credentials>) -> Response {
    let name = f.name.trim().to_string();
    let again = name.clone();
    let made = tokio::task::spawn_blocking(move || {
        let db = st.db.lock().expect("db lock");
        if !db
            .has_admin()
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))?
        {
            return Err((StatusCode::FORBIDDEN, NO_ACCOUNTS.to_string()));
        }
        accounts::check_name(&name).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
        accounts::check_password(&f.password).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
        let hash = accounts::hash_password(&f.password)
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))?;
        match db.add_user(&name, &hash, "user", "pending") {
            Ok(Some(_)) => {
                let t = Target::User(&name);
                action_log::record_in(&db, Some(&name), Action::Signup, t, "pending");
                Ok(())
            }
            Ok(None) => Err((
                StatusCode::CONFLICT,
                format!("name '{name}' is taken: choose another name"),
            )),
            Err(e) => Err((StatusCode::INTERNAL_SERVER_ERROR, e)),
        }
    })
    .await
    .unwrap_or_else(|e| Err((StatusCode::INTERNAL_SERVER_ERROR, e.to_string())));
    match made {
        Ok(()) => {
            let done =
                format!("Account {again} made: it can sign in once an admin has accepted it.");
            Html(page::signup(&again, None, Some(&done))).into_response()
        }
        Err((code, m)) => (code, Html(page::signup(&again, Some(&m), None))).into_response(),
    }
}

/// `GET /account`: the signed-in account and its API tokens.
pub async fn account(State(st): State<Shared>, Extension(caller): Extension<Caller>) -> Response {
    account_page(&st, &caller, None, None, StatusCode::OK)
}

fn account_page(
    st: &Shared,
    caller: &Caller,
    new: Option<&str>,
    message: Option<&str>,
    code: StatusCode,
) -> Response {
    let Some(user) = &caller.user else {
        return Redirect::to("/login").into_response();
    };
    match st.db.lock().expect("db lock").tokens(user.id) {
        Ok(tokens) => (code, Html(page::account(user, &tokens, new, message))).into_response(),
        Err(e) => internal(e),
    }
}

/// The new-token form's field.
#[derive(Deserialize)]
pub struct NewToken {
    #[serde(default)]
    pub label: String,
}

/// `POST /account/tokens`: a new API token, shown once.
pub async fn new_token(
    State(st): State<Shared>,
    Extension(caller): Extension<Caller>,
    Form(f): Form<NewToken>,
) -> Response {
    let Some(user) = &caller.user else {
        return Redirect::to("/login").into_response();
    };
    let label = f.label.trim();
    if label.len() > 100 {
        let m = "a token's label has at most 100 bytes";
        return account_page(&st, &caller, None, Some(m), StatusCode::BAD_REQUEST);
    }
    let token = match accounts::new_token() {
        Ok(t) => t,
        Err(e) => return internal(e),
    };
    let stored =
        st.db
            .lock()
            .expect("db lock")
            .add_token(&accounts::token_hash(&token), user.id, label);
    if let Err(e) = stored {
        return internal(e);
    }
    let t = Target::User(&user.name);
    let detail = format!("label '{label}'");
    action_log::record(&st.db, Some(&user.name), Action::TokenCreate, t, &detail);
    account_page(&st, &caller, Some(&token), None, StatusCode::OK)
}

/// `POST /account/tokens/{id}/revoke`.
pub async fn revoke_token(
    State(st): State<Shared>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<i64>,
) -> Response {
    let Some(user) = &caller.user else {
        return Redirect::to("/login").into_response();
    };
    let revoked = st.db.lock().expect("db lock").revoke_token(user.id, id);
    match revoked {
        Ok(true) => {
            let t = Target::User(&user.name);
            let detail = format!("token {id}");
            action_log::record(&st.db, Some(&user.name), Action::TokenRevoke, t, &detail);
            Redirect::to("/account").into_response()
        }
        Ok(false) => {
            let m = format!("you have no token {id}");
            account_page(&st, &caller, None, Some(&m), StatusCode::NOT_FOUND)
        }
        Err(e) => internal(e),
    }
}

fn users_page(st: &Shared, caller: &Caller, message: Option<&str>, code: StatusCode) -> Response {
    if !caller.is_admin() {
        let m = "only an admin sees and changes the accounts";
        return (StatusCode::FORBIDDEN, Html(page::users(&[], Some(m)))).into_response();
    }
    match st.db.lock().expect("db lock").users() {
        Ok(users) => (code, Html(page::users(&users, message))).into_response(),
        Err(e) => internal(e),
    }
}

/// `GET /users` (admins): every account.
pub async fn users(State(st): State<Shared>, Extension(caller): Extension<Caller>) -> Response {
    users_page(&st, &caller, None, StatusCode::OK)
}

/// The accept form's field.
#[derive(Deserialize)]
pub struct RoleForm {
    #[serde(default)]
    pub role: String,
}

/// `POST /users/{name}/accept` (admins): the account active, with the role given.
pub async fn accept(
    State(st): State<Shared>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    Form(f): Form<RoleForm>,
) -> Response {
    if !caller.is_admin() {
        return users_page(&st, &caller, None, StatusCode::FORBIDDEN);
    }
    let role = if f.role.is_empty() { "user" } else { &f.role };
    let refused = |m: String, code| users_page(&st, &caller, Some(&m), code);
    if !accounts::ROLES.contains(&role) {
        return refused(
            format!("role '{role}': give user, approver or admin"),
            StatusCode::BAD_REQUEST,
        );
    }
    if caller.name() == Some(name.as_str()) && role != "admin" {
        return refused(
            "you cannot take away your own admin role: another admin can".into(),
            StatusCode::BAD_REQUEST,
        );
    }
    let set = {
        let db = st.db.lock().expect("db lock");
        db.user(&name).and_then(|before| {
            let Some(before) = before else {
                return Ok(false);
            };
            db.set_user(&name, role, "active")?;
            let (action, detail) = if before.state == "pending" {
                (Action::Accept, format!("as {role}"))
            } else {
                (Action::Role, format!("{} to {role}", before.role))
            };
            action_log::record_in(&db, caller.name(), action, Target::User(&name), &detail);
            Ok(true)
        })
    };
    match set {
        Ok(true) => Redirect::to("/users").into_response(),
        Ok(false) => refused(format!("no account '{name}'"), StatusCode::NOT_FOUND),
        Err(e) => internal(e),
    }
}

/// `POST /users/{name}/reject` (admins): a pending account removed.
pub async fn reject(
    State(st): State<Shared>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Response {
    if !caller.is_admin() {
        return users_page(&st, &caller, None, StatusCode::FORBIDDEN);
    }
    let removed = st.db.lock().expect("db lock").remove_pending(&name);
    match removed {
        Ok(true) => {
            let t = Target::User(&name);
            action_log::record(&st.db, caller.name(), Action::Reject, t, "");
            Redirect::to("/users").into_response()
        }
        Ok(false) => users_page(
            &st,
            &caller,
            Some(&format!("no pending account '{name}'")),
            StatusCode::NOT_FOUND,
        ),
        Err(e) => internal(e),
    }
}

/// The trust form's field: `yes` or `no`.
#[derive(Deserialize)]
pub struct TrustForm {
    #[serde(default)]
    pub trusted: String,
}

/// `POST /users/{name}/trust` (admins): marks an account trusted (`trusted=yes`: its runs
/// need no approval) or not (`trusted=no`).
pub async fn trust(
    State(st): State<Shared>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    Form(f): Form<TrustForm>,
) -> Response {
    if !caller.is_admin() {
        return users_page(&st, &caller, None, StatusCode::FORBIDDEN);
    }
    let trusted = match f.trusted.as_str() {
        "yes" => true,
        "no" => false,
        other => {
            let m = format!("trusted '{other}': give yes or no");
            return users_page(&st, &caller, Some(&m), StatusCode::BAD_REQUEST);
        }
    };
    let set = st.db.lock().expect("db lock").set_trusted(&name, trusted);
    match set {
        Ok(true) => {
            let t = Target::User(&name);
            let detail = if trusted { "trusted" } else { "not trusted" };
            action_log::record(&st.db, caller.name(), Action::Trust, t, detail);
            Redirect::to("/users").into_response()
        }
        Ok(false) => {
            let m = format!("no account '{name}'");
            users_page(&st, &caller, Some(&m), StatusCode::NOT_FOUND)
        }
        Err(e) => internal(e),
    }
}
