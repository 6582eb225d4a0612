//! The API reference page (`/docs`), rendered from the service's OpenAPI documents.

use super::openapi;
use super::pages::{esc, markdown, page};
use serde_json::Value;
use std::fmt::Write as _;

/// The whole page.
pub(super) fn render() -> String {
    let docs = [
        ("/api/v1/openapi.json", openapi::randomness()),
        ("/v1/openapi.json", openapi::notary()),
    ];
    let mut out = String::from("<h1>vrs API reference</h1>");
    let _ = write!(
        out,
        "<p>Generated from the service's OpenAPI {} documents: \
         <a href=\"/api/v1/openapi.json\">/api/v1/openapi.json</a> (randomness and games) and \
         <a href=\"/v1/openapi.json\">/v1/openapi.json</a> (notary). Every body is JSON; every \
         error is a JSON object with an <code>error</code> message.</p>",
        esc(&serde_json::to_value(docs[0].1)
            .ok()
            .and_then(|v| v["openapi"].as_str().map(str::to_owned))
            .unwrap_or_default()),
    );
    for (url, doc) in docs {
        let Ok(v) = serde_json::to_value(doc) else {
            continue;
        };
        render_document(&mut out, url, &v);
    }
    page("vrs API reference", &out)
}

fn render_document(out: &mut String, url: &str, doc: &Value) {
    let info = &doc["info"];
    let _ = write!(
        out,
        "<section class=\"api\"><h2>{} <small>{}</small></h2>{}<p>Document: \
         <a href=\"{url}\">{url}</a></p>",
        esc(info["title"].as_str().unwrap_or("")),
        esc(info["version"].as_str().unwrap_or("")),
        markdown(info["description"].as_str().unwrap_or("")),
    );
    let empty = serde_json::Map::new();
    let paths = doc["paths"].as_object().unwrap_or(&empty);
    out.push_str(
        "<table class=\"endpoints\"><tr><th>Method</th><th>Path</th><th>Purpose</th></tr>",
    );
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap_or(&empty) {
            let _ = write!(
                out,
                "<tr><td class=\"method {m}\">{M}</td><td><a href=\"#{id}\"><code>{p}</code></a></td><td>{s}</td></tr>",
                m = esc(method),
                M = esc(&method.to_uppercase()),
                id = esc(&anchor_id(method, path)),
                p = esc(path),
                s = esc(op["summary"].as_str().unwrap_or("")),
            );
        }
    }
    out.push_str("</table>");
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap_or(&empty) {
            render_operation(out, path, method, op);
        }
    }
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        out.push_str("<h3>Schemas</h3>");
        for (name, s) in schemas {
            let _ = write!(
                out,
                "<div class=\"schema\" id=\"schema-{n}\"><h4>{n}</h4>",
                n = esc(name)
            );
            if let Some(d) = s["description"].as_str() {
                out.push_str(&markdown(d));
            }
            render_properties(out, s);
            out.push_str("</div>");
        }
    }
    out.push_str("</section>");
}

fn anchor_id(method: &str, path: &str) -> String {
    let mut id = format!("{method}-");
    id.extend(
        path.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }),
    );
    id
}

fn render_operation(out: &mut String, path: &str, method: &str, op: &Value) {
    let _ = write!(
        out,
        "<div class=\"operation\" id=\"{id}\"><h3><span class=\"method {m}\">{M}</span> <code>{p}</code></h3>\
         <p class=\"summary\">{s}</p>",
        id = esc(&anchor_id(method, path)),
        m = esc(method),
        M = esc(&method.to_uppercase()),
        p = esc(path),
        s = esc(op["summary"].as_str().unwrap_or("")),
    );
    if let Some(d) = op["description"].as_str() {
        out.push_str(&markdown(d));
    }
    if let Some(params) = op["parameters"].as_array() {
        out.push_str("<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Description</th></tr>");
        for p in params {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(p["name"].as_str().unwrap_or("")),
                esc(p["in"].as_str().unwrap_or("")),
                if p["required"].as_bool().unwrap_or(false) {
                    "yes"
                } else {
                    "no"
                },
                esc(p["description"].as_str().unwrap_or("")),
            );
        }
        out.push_str("</table>");
    }
    if let Some(body) = op["requestBody"].as_object() {
        out.push_str("<h4>Request body</h4>");
        if let Some(d) = body.get("description").and_then(Value::as_str) {
            let _ = write!(out, "<p>{}</p>", esc(d));
        }
        if let Some(content) = body.get("content").and_then(Value::as_object) {
            for (ct, media) in content {
                let _ = write!(
                    out,
                    "<p><code>{}</code>: {}</p>",
                    esc(ct),
                    schema_link(&media["schema"])
                );
                if let Some(ex) = media.get("example") {
                    let _ = write!(
                        out,
                        "<pre>{}</pre>",
                        esc(&serde_json::to_string_pretty(ex).unwrap_or_default())
                    );
                }
            }
        }
    }
    if let Some(responses) = op["responses"].as_object() {
        out.push_str(
            "<h4>Responses</h4><table><tr><th>Status</th><th>Meaning</th><th>Body</th></tr>",
        );
        for (status, r) in responses {
            let body = r["content"]
                .as_object()
                .and_then(|c| c.values().next())
                .map(|m| schema_link(&m["schema"]))
                .unwrap_or_default();
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(status),
                esc(r["description"].as_str().unwrap_or("")),
                body
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</div>");
}

/// A schema as a link to its definition, or its type.
fn schema_link(s: &Value) -> String {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!(
            "<a href=\"#schema-{n}\"><code>{n}</code></a>",
            n = esc(name)
        );
    }
    if let Some(one_of) = s["oneOf"].as_array() {
        return one_of
            .iter()
            .map(schema_link)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if s["type"] == "array" {
        return format!("array of {}", schema_link(&s["items"]));
    }
    match &s["type"] {
        Value::String(t) => format!("<code>{}</code>", esc(t)),
        Value::Array(ts) => format!(
            "<code>{}</code>",
            esc(&ts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | "))
        ),
        _ => "<code>any</code>".into(),
    }
}

fn render_properties(out: &mut String, s: &Value) {
    // The bet and notary bodies: their members, then per-type rules (in the description).
    if let Some(parts) = s["allOf"].as_array() {
        for part in parts {
            render_properties(out, part);
        }
        return;
    }
    let Some(props) = s["properties"].as_object() else {
        if let Some(values) = s["enum"].as_array() {
            let _ = write!(
                out,
                "<p>One of: {}</p>",
                values
                    .iter()
                    .map(|v| format!("<code>{}</code>", esc(&v.to_string())))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        return;
    };
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("<table><tr><th>Member</th><th>Type</th><th>Description</th></tr>");
    for (name, p) in props {
        let _ = write!(
            out,
            "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            if required.contains(&name.as_str()) {
                ""
            } else {
                " <small>(optional)</small>"
            },
            schema_link(p),
            esc(p["description"].as_str().unwrap_or("")),
        );
    }
    out.push_str("</table>");
}
