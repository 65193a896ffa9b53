//! The accounts' pages: sign in, sign up, an account's page with its API tokens, and the
//! admin's users page. Every POST form here opens with its CSRF field
//! ([`Page::csrf_field`]), as every other page's does.

use super::html::{esc, layout, time, Page};
use crate::serve::accounts::ROLES;
use crate::serve::db::users::{Token, User};

fn error(message: Option<&str>) -> String {
    message.map_or(String::new(), |m| {
        format!("<p class=\"err\" id=\"error\">{}</p>", esc(m))
    })
}

/// `/login`: the sign-in form.
pub fn login(page: &Page, name: &str, message: Option<&str>) -> String {
    let csrf = page.csrf_field();
    let body = format!(
        "{}<form method=\"post\" action=\"/login\">{csrf}\
         <p><label>Name <input name=\"name\" value=\"{}\" autocomplete=\"username\"></label></p>\
         <p><label>Password <input type=\"password\" name=\"password\" \
         autocomplete=\"current-password\"></label></p>\
         <p><button>Sign in</button></p></form>\
         <p>No account? <a href=\"/signup\">Sign up</a>: an admin accepts it.</p>",
        error(message),
        esc(name)
    );
    layout(page, "Sign in", &body, "")
}

/// `/signup`: the sign-up form, or what became of a sign-up (`done`).
pub fn signup(page: &Page, name: &str, message: Option<&str>, done: Option<&str>) -> String {
    let csrf = page.csrf_field();
    if let Some(done) = done {
        let body = format!("<p id=\"done\">{}</p>", esc(done));
        return layout(page, "Sign up", &body, "");
    }
    let body = format!(
        "{}<form method=\"post\" action=\"/signup\">{csrf}\
         <p><label>Name <input name=\"name\" value=\"{}\" autocomplete=\"username\"></label> \
         (letters, digits, <code>_ - .</code>)</p>\
         <p><label>Password <input type=\"password\" name=\"password\" \
         autocomplete=\"new-password\"></label> (at least {} characters)</p>\
         <p><button>Sign up</button></p></form>",
        error(message),
        esc(name),
        crate::serve::accounts::MIN_PASSWORD
    );
    layout(page, "Sign up", &body, "")
}

/// `/account`: the account, its API tokens (a new one shown once), and the token form.
pub fn account(
    page: &Page,
    user: &User,
    tokens: &[Token],
    new: Option<&str>,
    message: Option<&str>,
) -> String {
    let csrf = page.csrf_field();
    let shown = new.map_or(String::new(), |t| {
        format!(
            "<p>Your new API token (shown only now: copy it):</p><pre id=\"token\">{}</pre>\
             <p>Use it as <code>spar submit --token TOKEN</code> (or <code>SPAR_TOKEN</code>) \
             or the header <code>Authorization: Bearer TOKEN</code>.</p>",
            esc(t)
        )
    });
    let rows: String = tokens
        .iter()
        .map(|t| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><form class=\"inline\" \
                 method=\"post\" action=\"/account/tokens/{}/revoke\">{csrf}<button>revoke</button>\
                 </form></td></tr>",
                esc(&t.label),
                time(Some(t.created)),
                time(t.last_used),
                t.id
            )
        })
        .collect();
    let body = format!(
        "{}<p>Signed in as <b>{}</b> ({}).</p>{shown}<h2>API tokens</h2>\
         <table><tr><th>label</th><th>created</th><th>last used</th><th></th></tr>{rows}</table>\
         <form method=\"post\" action=\"/account/tokens\">{csrf}<label>Label \
         <input name=\"label\"></label> <button>New token</button></form>",
        error(message),
        esc(&user.name),
        esc(&user.role),
    );
    layout(page, "Account", &body, "")
}

/// `/users`: pending and active accounts, with accept/reject, the role and whether it is
/// trusted (its runs need no approval) of each.
pub fn users(page: &Page, users: &[User], message: Option<&str>) -> String {
    let csrf = page.csrf_field();
    let rows: String = users
        .iter()
        .map(|u| {
            let name = esc(&u.name);
            let options: String = ROLES
                .iter()
                .map(|r| {
                    let sel = if *r == u.role { " selected" } else { "" };
                    format!("<option{sel}>{r}</option>")
                })
                .collect();
            let pending = if u.state == "pending" {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/users/{name}/reject\">{csrf}\
                     <button>reject</button></form>"
                )
            } else {
                String::new()
            };
            let trust = if u.state == "active" {
                let (to, label) = if u.trusted {
                    ("no", "untrust")
                } else {
                    ("yes", "trust")
                };
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/users/{name}/trust\">{csrf}\
                     <input type=\"hidden\" name=\"trusted\" value=\"{to}\">\
                     <button>{label}</button></form>"
                )
            } else {
                String::new()
            };
            let set = if u.state == "pending" {
                "accept"
            } else {
                "set role"
            };
            format!(
                "<tr class=\"{}\" id=\"user-{name}\"><td>{name}</td><td>{}</td><td>{}</td>\
                 <td class=\"trusted\">{}</td><td>{}</td><td>\
                 <form class=\"inline\" method=\"post\" action=\"/users/{name}/accept\">{csrf}\
                 <select name=\"role\">{options}</select> <button>{set}</button></form> \
                 {pending}{trust}</td></tr>",
                esc(&u.state),
                esc(&u.state),
                esc(&u.role),
                if u.trusted { "yes" } else { "no" },
                time(Some(u.created)),
            )
        })
        .collect();
    let body = format!(
        "{}<table><tr><th>name</th><th>state</th><th>role</th><th>trusted</th><th>created</th><th></th></tr>\
         {rows}</table>",
        error(message)
    );
    layout(page, "Users", &body, "")
}
