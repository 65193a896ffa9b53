//! The server-rendered pages: the index ([`index`]), a run ([`run`]), the search
//! ([`search`]); [`html`] holds the one escaping function and the layout. Every page reads
//! without JavaScript; a small inline script polls the JSON API for live numbers.

pub mod accounts;
pub mod actions;
pub mod engines;
pub mod html;
pub mod index;
pub mod nets;
pub mod ops;
pub mod run;
pub mod search;
pub mod watch;

use html::{esc, num};

use super::db::runs::{Run, State};
use super::live::Live;

/// The class of a run's row: its verdict (`H1` green, `H0` red) or `failed`.
fn row_class(run: &Run, live: &Live) -> &'static str {
    match (live.verdict.as_deref(), run.state) {
        (Some("H1"), _) => "H1",
        (Some("H0"), _) => "H0",
        (_, State::Failed) => "failed",
        _ => "",
    }
}

/// The header of [`rows`]' table.
pub const TABLE_HEAD: &str = "<table><tr><th>run</th><th>kind</th><th>state</th>\
<th>words</th><th>games</th><th>Elo</th><th>LLR</th><th>note</th></tr>";

/// A run's state as its row shows it: `failed: disk full` (the whole reason in its title)
/// when the server knows why it failed, else the state.
fn state_cell(run: &Run) -> String {
    match super::disk::reason(run) {
        Some(reason) => format!(
            "<td data-f=\"state\" title=\"{}\">{}: {}</td>",
            esc(reason),
            esc(run.state.as_str()),
            esc(super::disk::REASON_PREFIX.trim_end_matches([':', ' ']))
        ),
        None => format!("<td data-f=\"state\">{}</td>", esc(run.state.as_str())),
    }
}

/// One table row per run, each cell marked for the live script (`data-f`).
pub fn rows(runs: &[(Run, Live)]) -> String {
    let mut out = String::new();
    for (run, live) in runs {
        out.push_str(&format!(
            "<tr id=\"run-{id}\" class=\"{class}\" data-id=\"{id}\" data-state=\"{state}\">\
             <td><a href=\"/runs/{id}\">{id}</a></td><td>{kind}</td>\
             {state_cell}<td class=\"words\">{words}</td>\
             <td data-f=\"games\">{games}</td><td data-f=\"elo\">{elo}</td>\
             <td data-f=\"llr\">{llr}</td><td>{note}</td></tr>",
            id = run.id,
            class = row_class(run, live),
            state = esc(run.state.as_str()),
            state_cell = state_cell(run),
            kind = esc(run.kind.as_str()),
            words = esc(&run.words.join(" ")),
            games = live.games.map_or("–".to_string(), |g| g.to_string()),
            elo = elo(live),
            llr = llr(live),
            note = esc(&run.note),
        ));
    }
    out
}

/// `Elo ± error`.
pub fn elo(live: &Live) -> String {
    match live.elo {
        Some(e) => format!("{} ± {}", num(Some(e), 2), num(live.elo_error, 2)),
        None => "–".into(),
    }
}

/// `LLR (lower, upper)`.
pub fn llr(live: &Live) -> String {
    match live.llr {
        Some(l) => format!(
            "{} ({}, {})",
            num(Some(l), 2),
            num(live.lower, 2),
            num(live.upper, 2)
        ),
        None => "–".into(),
    }
}

/// The inline script that refreshes rows and fields marked `data-f` (the page works
/// without it): the run page's table (`id="run"`) from its live stream
/// (`/api/runs/ID/events`, Server-Sent Events), the index's rows from the index stream
/// (`/api/events/runs`; a run that leaves the queue moves to its section; a run the page
/// has no row of yet gets its row from `/runs/ID/row`, the server's own rendering), anything else —
/// and both when `EventSource` is missing or its stream fails — by polling the API every
/// two seconds.
pub const LIVE_SCRIPT: &str = r#"<script>
function fmt(v,d){return (v===null||v===undefined)?"–":Number(v).toFixed(d);}
function fill(el,r){
  var l=r.live||{};
  var f={state:r.reason?r.state+": "+r.reason.split(":")[0]:r.state,games:(l.games===null||l.games===undefined)?"–":String(l.games),
    elo:(l.elo===null||l.elo===undefined)?"–":fmt(l.elo,2)+" ± "+fmt(l.elo_error,2),
    llr:(l.llr===null||l.llr===undefined)?"–":fmt(l.llr,2)+" ("+fmt(l.lower,2)+", "+fmt(l.upper,2)+")",
    wdl:(l.wins===null||l.wins===undefined)?"–":l.wins+"-"+l.losses+"-"+l.draws,
    iteration:(l.iteration===null||l.iteration===undefined)?"–":String(l.iteration),
    positions:(l.positions===null||l.positions===undefined)?"–":String(l.positions),
    positions_per_s:fmt(l.positions_per_s,1),
    lines:(l.lines||[]).join("\n"),verdict:l.verdict||"–",cores:(r.cores===null||r.cores===undefined)?"–":String(r.cores)};
  el.querySelectorAll("[data-f]").forEach(function(c){var k=c.getAttribute("data-f");if(k in f)c.textContent=f[k];});
  if(el.tagName==="TR"){el.className=l.verdict==="H1"?"H1":l.verdict==="H0"?"H0":r.state==="failed"?"failed":"";}
}
function watch(el){
  var s=el.getAttribute("data-state");
  if(!window.EventSource||(s!=="running"&&s!=="queued"))return;
  var es=new EventSource("/api/runs/"+el.getAttribute("data-id")+"/events");
  el.setAttribute("data-sse","on");
  es.onmessage=function(m){
    var r;try{r=JSON.parse(m.data);}catch(e){return;}
    el.setAttribute("data-events",String(Number(el.getAttribute("data-events")||0)+1));
    if(r.live)fill(el,r);
    if(r.state){el.setAttribute("data-state",r.state);}
    if(r.state!=="running"&&r.state!=="queued"){es.close();el.removeAttribute("data-sse");}
  };
  es.onerror=function(){es.close();el.removeAttribute("data-sse");};
}
function place(el,s){
  var sec=document.getElementById(s==="running"||s==="queued"?s:s==="pending-approval"?"waiting":"finished");
  var t=sec&&sec.querySelector("table");
  if(!t||el.tagName!=="TR"||el.closest("section")===sec)return;
  var tb=t.tBodies[0];tb.insertBefore(el,tb.rows[1]||null);
  t.parentNode.hidden=false;var p=sec.querySelector("p");if(p)p.hidden=true;
}
var indexSse=false;
var adding={};
function add(r){
  if(adding[r.id]||r.state==="deleted")return;
  adding[r.id]=true;
  fetch("/runs/"+r.id+"/row").then(function(x){return x.ok?x.text():"";}).then(function(h){
    if(!h||document.getElementById("run-"+r.id))return;
    var t=document.createElement("tbody");t.innerHTML=h;var el=t.firstElementChild;
    if(!el)return;el.setAttribute("data-added","live");place(el,el.getAttribute("data-state"));
  }).catch(function(){}).then(function(){adding[r.id]=false;});
}
function watchIndex(){
  if(!window.EventSource)return;
  var es=new EventSource("/api/events/runs");
  indexSse=true;
  es.onmessage=function(m){
    var r;try{r=JSON.parse(m.data);}catch(e){return;}
    var el=document.getElementById("run-"+r.id);
    if(!el){add(r);return;}
    el.setAttribute("data-events",String(Number(el.getAttribute("data-events")||0)+1));
    if(r.live)fill(el,r);
    if(!r.live){var c=el.querySelector("[data-f=state]");if(c)c.textContent=r.state;}
    if(r.state){el.setAttribute("data-state",r.state);place(el,r.state);}
  };
  es.onerror=function(){es.close();indexSse=false;};
}
var run=document.getElementById("run");
if(run)watch(run);else if(document.getElementById("running"))watchIndex();
function poll(){
  document.querySelectorAll("[data-id]").forEach(function(el){
    var s=el.getAttribute("data-state");
    if(indexSse||el.getAttribute("data-sse")==="on"||(s!=="running"&&s!=="queued"))return;
    fetch("/api/runs/"+el.getAttribute("data-id")).then(function(r){return r.json();}).then(function(r){
      if(r&&r.id!==undefined){fill(el,r);el.setAttribute("data-state",r.state);place(el,r.state);}
    }).catch(function(){});
  });
}
setInterval(poll,2000);
</script>"#;

/// Splits a textarea of words as a POSIX shell splits a command line, without a shell:
/// whitespace separates words, single and double quotes and backslashes keep what they
/// quote in one word (no expansion) — the inverse of the quoting of a run page's command
/// line ([`crate::serve::words::command_line`]): both are the `shell-words` crate's.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    // A form's textarea sends its line breaks as CRLF; a carriage return separates words as
    // any other white space does.
    let text = text.replace('\r', " ");
    shell_words::split(&text).map_err(|_| {
        "a quote in the words is not closed (or the words end with a lone backslash)".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_whitespace_and_quotes_keep_it() {
        assert_eq!(
            split_words("--engine name=dev\n  --each nodes=400 'cmd=/a b/e' \"x y\"z ''").unwrap(),
            [
                "--engine",
                "name=dev",
                "--each",
                "nodes=400",
                "cmd=/a b/e",
                "x yz",
                ""
            ]
        );
        assert!(split_words("'open").is_err());
        assert_eq!(split_words("a\r\nb\rc").unwrap(), ["a", "b", "c"]);
        // A command line copied from a run page pastes back as the same words.
        let words = ["--engine", "cmd=/a b/it's", "args=-x \\y", "", "name=a\"b"];
        let line = crate::serve::words::command_line(
            crate::jobs::by_command("match").unwrap(),
            &words.map(String::from),
            std::path::Path::new("/r"),
        );
        let back = split_words(&line).unwrap();
        assert_eq!(back[2..7], words);
        assert!(split_words("   ").unwrap().is_empty());
    }

    #[test]
    fn rows_escape_words_and_notes() {
        let run = Run {
            id: 3,
            kind: "match".into(),
            words: vec!["<b>".into()],
            throughput: 100,
            note: "a&b".into(),
            state: "running".into(),
            ..Run::default()
        };
        let html = rows(&[(run, Live::default())]);
        assert!(
            html.contains("&lt;b&gt;") && html.contains("a&amp;b"),
            "{html}"
        );
        assert!(!html.contains("<b>"));
    }
}
