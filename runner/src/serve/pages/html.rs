//! The page layout with its [`Page`] (the caller's account links and the CSRF field of
//! each POST form), and the one escaping function every page uses for every piece of text
//! it did not write itself ([`esc`], the crate's, from `crate::html`). Pages are written by
//! hand rather than with a template crate: they are few and small, and one function, used
//! everywhere, is easier to audit than a template language's rules of when it escapes.

pub use crate::html::esc;

/// Where the navigation's account links go: on a server with accounts the page's
/// [`Page`] puts them there (`serve/accounts/page.rs`); without accounts it stays an HTML
/// comment.
pub const ACCOUNT_MARK: &str = "<!--account-->";

/// What a page shows of its caller: the navigation's account links and the session's CSRF
/// token (made from the caller by `serve/accounts/page.rs`, where it is also an extractor).
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The navigation's account links (`None`: a server without accounts, whose layout
    /// keeps [`ACCOUNT_MARK`]).
    links: Option<String>,
    /// The session's CSRF token (a signed-in session only).
    csrf: Option<String>,
}

impl Page {
    /// A page context: the account links (`None`: none, the mark stays) and the CSRF token.
    pub fn new(links: Option<String>, csrf: Option<String>) -> Page {
        Page { links, csrf }
    }

    /// What the layout puts at the end of the navigation.
    pub fn links(&self) -> &str {
        self.links.as_deref().unwrap_or(ACCOUNT_MARK)
    }

    /// The session's CSRF token.
    pub fn csrf(&self) -> Option<&str> {
        self.csrf.as_deref()
    }

    /// The hidden CSRF field that opens every `<form method="post">` of a page (empty
    /// without a signed-in session).
    pub fn csrf_field(&self) -> String {
        csrf_field(self.csrf.as_deref())
    }
}

/// `<input type="hidden" name="csrf" value="TOKEN">`, or nothing.
pub fn csrf_field(csrf: Option<&str>) -> String {
    csrf.map_or(String::new(), |t| {
        format!("<input type=\"hidden\" name=\"csrf\" value=\"{}\">", esc(t))
    })
}

/// A whole page for its caller (`page`: the account links): `title` (escaped here), `body`
/// (already HTML, its POST forms opened with [`Page::csrf_field`]), an optional inline
/// script.
pub fn layout(page: &Page, title: &str, body: &str, script: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>{t} · spar serve</title><style>{STYLE}</style></head><body>\
         <nav><a href=\"/\">spar serve</a> · <a href=\"/search\">search</a> · \
         <a href=\"/engines\">engines</a> · <a href=\"/nets\">nets</a> · \
         <a href=\"/machines\">machines</a> · <a href=\"/events\">events</a> · \
         <a href=\"/actions\">actions</a>{links}</nav>\
         <main><h1>{t}</h1>{body}</main>{script}</body></html>\n",
        t = esc(title),
        links = page.links(),
    )
}

/// A number with `digits` decimals, or a dash.
pub fn num(x: Option<f64>, digits: usize) -> String {
    // `+ 0.0` turns -0 into 0: no "-0.00".
    x.map_or("–".to_string(), |x| format!("{:.digits$}", x + 0.0))
}

/// A Unix time as `YYYY-MM-DD HH:MM` UTC.
pub fn time(t: Option<i64>) -> String {
    let Some(t) = t else {
        return "–".into();
    };
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#222}\
nav{background:#234;padding:.5em 1em}nav a{color:#fff;text-decoration:none;font-weight:600}\
main{padding:0 1em 2em}table{border-collapse:collapse;margin:.5em 0}\
td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
tr.H1{background:#d8f5d0}tr.H0{background:#f8d6d6}tr.failed{background:#fbe9c8}\
code,pre{background:#f4f4f4;padding:.1em .3em}pre{padding:.5em;overflow-x:auto}\
.words{font-family:monospace;max-width:40em;overflow-wrap:anywhere}\
form.inline{display:inline}textarea{width:100%;max-width:50em;font-family:monospace}\
.err{color:#a00;font-weight:600}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_escaped_in_the_layout() {
        let page = layout(&Page::default(), "<b>x</b>", "", "");
        assert!(page.contains("<title>&lt;b&gt;x&lt;/b&gt; · spar serve</title>"));
        assert!(!page.contains("<b>x</b>"));
    }

    #[test]
    fn numbers_have_their_decimals_and_no_negative_zero() {
        assert_eq!(num(Some(-0.0), 2), "0.00");
        assert_eq!(num(Some(-1.234), 1), "-1.2");
        assert_eq!(num(None, 2), "–");
    }

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(time(Some(0)), "1970-01-01 00:00");
        assert_eq!(time(Some(1_764_123_456)), "2025-11-26 02:17");
        assert_eq!(time(None), "–");
    }
}
