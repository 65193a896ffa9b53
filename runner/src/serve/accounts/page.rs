//! What a page shows of its caller, as handlers take it: [`Caller`] and [`Page`] are
//! extractors (`FromRequestParts`, as Atuin's `UserAuth`), read from what the guard found
//! ([`super::guard`] puts the caller in the request's extensions). A page renders its
//! account links through the layout and the CSRF field in each of its POST forms itself
//! ([`Page::csrf_field`]): the guard never rewrites an answer.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::Caller;
use crate::serve::pages::html::{csrf_field, esc, Page};

impl Page {
    /// The page context of `caller`.
    pub fn of(caller: &Caller) -> Page {
        let csrf = caller.csrf.clone().filter(|_| caller.accounts);
        let links = caller
            .accounts
            .then(|| account_links(caller, &csrf_field(csrf.as_deref())));
        Page::new(links, csrf)
    }
}

/// The navigation's account links: the account, the users page for an admin, sign out (a
/// POST form, with `csrf`, its CSRF field); or sign in and sign up.
fn account_links(caller: &Caller, csrf: &str) -> String {
    match &caller.user {
        Some(u) => format!(
            " · <a href=\"/account\">{}</a>{} · <form class=\"inline\" method=\"post\" \
             action=\"/logout\">{csrf}<button>sign out</button></form>",
            esc(&u.name),
            if u.role == "admin" {
                " · <a href=\"/users\">users</a>"
            } else {
                ""
            }
        ),
        None => " · <a href=\"/login\">sign in</a> · <a href=\"/signup\">sign up</a>".into(),
    }
}

/// The caller the guard found.
fn found(parts: &Parts) -> Option<Caller> {
    parts.extensions.get::<Caller>().cloned()
}

/// The answer when the guard did not run (a route outside the router's layers).
fn unguarded() -> Response {
    let m = "the request passed no accounts guard (a server bug: report it)";
    (StatusCode::INTERNAL_SERVER_ERROR, m).into_response()
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        found(parts).ok_or_else(unguarded)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Page {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        found(parts).map(|c| Page::of(&c)).ok_or_else(unguarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::db::users::User;
    use crate::serve::pages::html::ACCOUNT_MARK;

    fn user(name: &str, role: &str) -> User {
        User {
            id: 1,
            name: name.into(),
            hash: String::new(),
            role: role.into(),
            state: "active".into(),
            created: 0,
            trusted: false,
        }
    }

    #[test]
    fn without_accounts_the_mark_stays_and_no_field() {
        let page = Page::of(&Caller::default());
        assert_eq!(page.links(), ACCOUNT_MARK);
        assert_eq!(page.csrf_field(), "");
    }

    #[test]
    fn a_session_has_its_links_and_its_field_in_the_sign_out_form() {
        let caller = Caller {
            user: Some(user("ann<", "admin")),
            csrf: Some("c0ffee".into()),
            accounts: true,
        };
        let page = Page::of(&caller);
        let field = "<input type=\"hidden\" name=\"csrf\" value=\"c0ffee\">";
        assert_eq!(page.csrf_field(), field);
        assert!(page.links().contains("<a href=\"/account\">ann&lt;</a>"));
        assert!(page.links().contains("<a href=\"/users\">users</a>"));
        assert!(page
            .links()
            .contains(&format!("action=\"/logout\">{field}<button>")));
    }

    #[test]
    fn nobody_signed_in_gets_sign_in_and_no_field() {
        let caller = Caller {
            accounts: true,
            ..Caller::default()
        };
        let page = Page::of(&caller);
        assert!(page.links().contains("sign in"));
        assert_eq!(page.csrf_field(), "");
    }
}
