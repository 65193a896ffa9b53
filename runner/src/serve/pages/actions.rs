//! The actions log page (`/actions`): who did what, when, to which run, engine or account,
//! newest first; filtered by user, action, target and dates, the filters in the URL (a GET
//! form), every text escaped.

use super::html::{esc, layout, time, Page};
use crate::serve::action_log::Action;
use crate::serve::db::action_log::{ActionFilter, ActionRow};

/// A target as a link: a run's page, the engines page, the users page; else the text.
fn target_link(target: &str) -> String {
    let shown = esc(target);
    if let Some(id) = target
        .strip_prefix("run ")
        .and_then(|i| i.parse::<i64>().ok())
    {
        return format!("<a href=\"/runs/{id}\">{shown}</a>");
    }
    if let Some(name) = target.strip_prefix("engine ") {
        return format!("<a href=\"/engines#engine-{}\">{shown}</a>", esc(name));
    }
    shown
}

/// The page: the filter form (with `message`, a refused filter's error) and the rows.
pub fn page(page: &Page, f: &ActionFilter, rows: &[ActionRow], message: Option<&str>) -> String {
    let mut kinds = String::from("<select name=\"action\"><option value=\"\">any</option>");
    for a in Action::ALL {
        let sel = if f.action.trim() == a.name() {
            " selected"
        } else {
            ""
        };
        kinds.push_str(&format!("<option{sel}>{}</option>", a.name()));
    }
    kinds.push_str("</select>");
    let mut b = String::new();
    if let Some(m) = message {
        b.push_str(&format!("<p class=\"err\" id=\"error\">{}</p>", esc(m)));
    }
    b.push_str(&format!(
        "<form method=\"get\" action=\"/actions\">\
         <label>user <input name=\"user\" value=\"{user}\" size=\"10\"></label> \
         <label>action {kinds}</label> \
         <label>target <input name=\"target\" value=\"{target}\" size=\"12\" \
         placeholder=\"run 7\"></label> \
         <label>from <input name=\"from\" value=\"{from}\" size=\"10\" \
         placeholder=\"YYYY-MM-DD\"></label> \
         <label>to <input name=\"to\" value=\"{to}\" size=\"10\" \
         placeholder=\"YYYY-MM-DD\"></label> \
         <button type=\"submit\">Filter</button></form>",
        user = esc(&f.user),
        target = esc(&f.target),
        from = esc(&f.from),
        to = esc(&f.to),
    ));
    if rows.is_empty() {
        b.push_str("<p>No action.</p>");
    } else {
        b.push_str(
            "<table id=\"actions\"><tr><th>time (UTC)</th><th>who</th><th>action</th>\
             <th>target</th><th>detail</th></tr>",
        );
        for r in rows {
            b.push_str(&format!(
                "<tr class=\"act-{action}\"><td>{t}</td><td class=\"who\">{who}</td>\
                 <td class=\"action\">{action}</td><td class=\"target\">{target}</td>\
                 <td>{detail}</td></tr>",
                t = time(Some(r.time)),
                who = esc(&r.who),
                action = esc(&r.action),
                target = target_link(&r.target),
                detail = esc(&r.detail),
            ));
        }
        b.push_str("</table>");
    }
    layout(page, "Actions", &b, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_filters_are_escaped_and_targets_linked() {
        let row = ActionRow {
            id: 1,
            time: 0,
            who: "<ann>".into(),
            action: "note".into(),
            target: "run 7".into(),
            detail: "<script>x</script>".into(),
        };
        let f = ActionFilter {
            user: "\"><b>".into(),
            ..ActionFilter::default()
        };
        let html = page(&Page::default(), &f, &[row], Some("<i>bad</i>"));
        assert!(html.contains("&lt;ann&gt;") && html.contains("&lt;script&gt;"));
        assert!(html.contains("value=\"&quot;&gt;&lt;b&gt;\""), "{html}");
        assert!(html.contains("&lt;i&gt;bad&lt;/i&gt;"));
        assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains("<i>"));
        assert!(html.contains("<a href=\"/runs/7\">run 7</a>"));
        assert_eq!(target_link("user <x>"), "user &lt;x&gt;");
    }
}
