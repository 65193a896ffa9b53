//! What every HTML page and SVG file of spar is written with: the one escaping function,
//! [`esc`], for every piece of text a page did not write itself (titles, names, notes, file
//! names, stderr lines, status lines), and the SVG charts' scaffolding ([`chart`]).
//! Pages are written by hand rather than with a template crate: they are few and small,
//! and one function used everywhere is easier to audit than a template language's rules
//! of when it escapes.

pub mod chart;

/// Text made safe for HTML and SVG element content and for attribute values in double or
/// single quotes.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_character_is_escaped() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(esc("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
        assert_eq!(esc("name=dev nodes=400 Ω θ −"), "name=dev nodes=400 Ω θ −");
        assert_eq!(esc(""), "");
        // Escaping twice shows the first escape as text, never markup.
        assert_eq!(esc(&esc("<")), "&amp;lt;");
    }
}
