//! Signing in and out, signing up, an account's API tokens, and the admin's users page
//! (accept, reject, role, trusted). Who may post here is the accounts guard's business
//! (`serve/accounts/guard.rs`); these handlers check only what is theirs: a password, an
//! admin for `/users`. Each change is recorded in the actions log.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::serve::accounts::guard::cookie;
use crate::serve::accounts::{self, hashing, Caller, COOKIE, SESSION_SECONDS};
use crate::serve::action_log::{self, Action, Target};
use crate::serve::db::runs::now;
use crate::serve::db::users::RoleChange;
use crate::serve::pages::accounts as page;
use crate::serve::pages::html::Page;
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
pub async fn login_form(caller: Caller) -> Response {
    let message = (!caller.accounts).then_some(NO_ACCOUNTS);
    Html(page::login(&Page::of(&caller), "", message)).into_response()
}

/// `POST /login`: a session and its cookie, then the index. A wrong name and a wrong
/// password are one answer, at every stage: from the fifth failure in a row a name waits
/// longer after each, whether or not an account has it.
pub async fn login(State(st): State<Shared>, pg: Page, Form(f): Form<Credentials>) -> Response {
    let name = f.name.trim().to_string();
    let secure = st.secure_cookie;
    match sign_in(&st, &name, f.password).await {
        Ok(token) => (
            StatusCode::SEE_OTHER,
            [
                (header::SET_COOKIE, session_cookie(&token, secure)),
                (header::LOCATION, "/".to_string()),
            ],
        )
            .into_response(),
        Err((code, message)) => {
            (code, Html(page::login(&pg, &name, Some(&message)))).into_response()
        }
    }
}

type Refused = (StatusCode, String);

/// Runs `f` on the database off the async threads.
async fn on_db<T: Send + 'static>(
    st: &Shared,
    f: impl FnOnce(&crate::serve::db::Db) -> Result<T, Refused> + Send + 'static,
) -> Result<T, Refused> {
    let done = st.store.read(move |db| Ok::<_, String>(f(db))).await;
    done.unwrap_or_else(|e| Err((StatusCode::INTERNAL_SERVER_ERROR, e)))
}

fn busy(_: hashing::Busy) -> Refused {
    (StatusCode::SERVICE_UNAVAILABLE, hashing::BUSY.to_string())
}

/// Checks a name and password; `Ok`: the new session's token.
async fn sign_in(st: &Shared, name: &str, password: String) -> Result<String, Refused> {
    let fail = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let wrong = (
        StatusCode::UNAUTHORIZED,
        "the name or the password is wrong".to_string(),
    );
    // A name no account can have is never counted (nor stored): it answers as any
    // unknown name does.
    let counted = accounts::check_name(name).is_ok();
    let n = name.to_string();
    let (user, wait) = on_db(st, move |db| {
        if !db.accounts().map_err(fail)?.0 {
            return Err((StatusCode::FORBIDDEN, NO_ACCOUNTS.into()));
        }
        let wait = if counted {
            db.login_wait(&n).map_err(fail)?
        } else {
            0
        };
        Ok((db.user(&n).map_err(fail)?, wait))
    })
    .await?;
    if wait > 0 {
        return Err((
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many failed sign-ins for {name}: try again in {wait} s"),
        ));
    }
    // As slow as a real check for a name no account has: the two look the same.
    let hash = user.as_ref().map(|u| u.hash.clone());
    let ok = hashing::run(move || match hash {
        Some(h) => accounts::verify_password(&password, &h),
        None => {
            accounts::verify_password(&password, dummy_hash());
            false
        }
    })
    .await
    .map_err(busy)?;
    let n = name.to_string();
    on_db(st, move |db| {
        if ok {
            return db.login_succeeded(&n).map_err(fail);
        }
        if counted {
            if let Some(wait) = db.login_failed(&n).map_err(fail)? {
                let detail = format!("failed sign-ins in a row: {n} waits {wait} s");
                action_log::record_in(db, None, Action::Lock, Target::User(&n), &detail);
            }
        }
        Ok(())
    })
    .await?;
    let Some(user) = user.filter(|_| ok) else {
        return Err(wrong);
    };
    if user.state != "active" {
        return Err((
            StatusCode::FORBIDDEN,
            format!("{} is waiting for an admin to accept it", user.name),
        ));
    }
    let token = accounts::new_token().map_err(fail)?;
    on_db(st, move |db| {
        let hash = accounts::token_hash(&token);
        db.add_session(&hash, user.id, now() + SESSION_SECONDS)
            .map_err(fail)?;
        Ok(token)
    })
    .await
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
        let hash = accounts::token_hash(&token);
        let removed = st.store.write(move |db| db.remove_session(&hash)).await;
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
pub async fn signup_form(caller: Caller) -> Response {
    let message = (!caller.accounts).then_some(NO_ACCOUNTS);
    Html(page::signup(&Page::of(&caller), "", message, None)).into_response()
}

/// `POST /signup`: a pending account (it signs in once an admin accepts it). A name is
/// taken by any account of the same name in another case (`Bob` by `bob`).
pub async fn signup(State(st): State<Shared>, pg: Page, Form(f): Form<Credentials>) -> Response {
    let name = f.name.trim().to_string();
    let made = make_account(&st, name.clone(), f.password).await;
    match made {
        Ok(()) => {
            let done =
                format!("Account {name} made: it can sign in once an admin has accepted it.");
            Html(page::signup(&pg, &name, None, Some(&done))).into_response()
        }
        Err((code, m)) => (code, Html(page::signup(&pg, &name, Some(&m), None))).into_response(),
    }
}

async fn make_account(st: &Shared, name: String, password: String) -> Result<(), Refused> {
    let internal = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    on_db(st, move |db| match db.has_admin() {
        Ok(true) => Ok(()),
        Ok(false) => Err((StatusCode::FORBIDDEN, NO_ACCOUNTS.to_string())),
        Err(e) => Err(internal(e)),
    })
    .await?;
    accounts::check_name(&name).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    accounts::check_password(&password).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    let hash = hashing::run(move || accounts::hash_password(&password))
        .await
        .map_err(busy)?
        .map_err(internal)?;
    on_db(st, move |db| {
        match db.add_user(&name, &hash, "user", "pending") {
            Ok(Some(_)) => {
                let t = Target::User(&name);
                action_log::record_in(db, Some(&name), Action::Signup, t, "pending");
                Ok(())
            }
            Ok(None) => Err((
                StatusCode::CONFLICT,
                format!("name '{name}' is taken: choose another name"),
            )),
            Err(e) => Err(internal(e)),
        }
    })
    .await
}

/// `GET /account`: the signed-in account and its API tokens.
pub async fn account(State(st): State<Shared>, caller: Caller) -> Response {
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
    match st.store.blocking(|db| db.tokens(user.id)) {
        Ok(tokens) => (
            code,
            Html(page::account(
                &Page::of(caller),
                user,
                &tokens,
                new,
                message,
            )),
        )
            .into_response(),
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
    caller: Caller,
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
    let (hash, id, owned) = (accounts::token_hash(&token), user.id, label.to_string());
    let stored = st
        .store
        .write(move |db| db.add_token(&hash, id, &owned))
        .await;
    if let Err(e) = stored {
        return internal(e);
    }
    let t = Target::User(&user.name);
    let detail = format!("label '{label}'");
    action_log::record(&st.store, Some(&user.name), Action::TokenCreate, t, &detail);
    account_page(&st, &caller, Some(&token), None, StatusCode::OK)
}

/// `POST /account/tokens/{id}/revoke`.
pub async fn revoke_token(
    State(st): State<Shared>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Response {
    let Some(user) = &caller.user else {
        return Redirect::to("/login").into_response();
    };
    let user_id = user.id;
    let revoked = st.store.write(move |db| db.revoke_token(user_id, id)).await;
    match revoked {
        Ok(true) => {
            let t = Target::User(&user.name);
            let detail = format!("token {id}");
            action_log::record(&st.store, Some(&user.name), Action::TokenRevoke, t, &detail);
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
        return (
            StatusCode::FORBIDDEN,
            Html(page::users(&Page::of(caller), &[], Some(m))),
        )
            .into_response();
    }
    match st.store.blocking(|db| db.users()) {
        Ok(users) => (code, Html(page::users(&Page::of(caller), &users, message))).into_response(),
        Err(e) => internal(e),
    }
}

/// `GET /users` (admins): every account.
pub async fn users(State(st): State<Shared>, caller: Caller) -> Response {
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
    caller: Caller,
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
    let by = caller.name().unwrap_or_default().to_string();
    let (n, r) = (name.clone(), role.to_string());
    let set = on_db(&st, move |db| {
        let change = db.set_role(&by, &n, &r);
        if let Ok(RoleChange::Done(before)) = &change {
            let (action, detail) = if before.state == "pending" {
                (Action::Accept, format!("as {r}"))
            } else {
                (Action::Role, format!("{} to {r}", before.role))
            };
            action_log::record_in(db, Some(&by), action, Target::User(&before.name), &detail);
        }
        change.map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e))
    })
    .await;
    match set {
        Ok(RoleChange::Done(_)) => Redirect::to("/users").into_response(),
        Ok(RoleChange::NoAccount) => refused(format!("no account '{name}'"), StatusCode::NOT_FOUND),
        Ok(RoleChange::NotAdmin) => refused(
            "you are no longer an admin: another admin changed your role".into(),
            StatusCode::FORBIDDEN,
        ),
        Ok(RoleChange::LastAdmin) => refused(
            format!("{name} is the last admin: make another admin first"),
            StatusCode::CONFLICT,
        ),
        Err((_, e)) => internal(e),
    }
}

/// `POST /users/{name}/reject` (admins): a pending account removed.
pub async fn reject(
    State(st): State<Shared>,
    caller: Caller,
    Path(name): Path<String>,
) -> Response {
    if !caller.is_admin() {
        return users_page(&st, &caller, None, StatusCode::FORBIDDEN);
    }
    let n = name.clone();
    let removed = st.store.write(move |db| db.remove_pending(&n)).await;
    match removed {
        Ok(true) => {
            let t = Target::User(&name);
            action_log::record(&st.store, caller.name(), Action::Reject, t, "");
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
    caller: Caller,
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
    let n = name.clone();
    let set = st.store.write(move |db| db.set_trusted(&n, trusted)).await;
    match set {
        Ok(true) => {
            let t = Target::User(&name);
            let detail = if trusted { "trusted" } else { "not trusted" };
            action_log::record(&st.store, caller.name(), Action::Trust, t, detail);
            Redirect::to("/users").into_response()
        }
        Ok(false) => {
            let m = format!("no account '{name}'");
            users_page(&st, &caller, Some(&m), StatusCode::NOT_FOUND)
        }
        Err(e) => internal(e),
    }
}
