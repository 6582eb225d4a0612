//! The lying operator of the verification tests: an HTTP proxy in front of a real `vrs serve`
//! that changes the JSON it hands out, and the changes themselves.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// An HTTP proxy in front of `upstream` that lets `tamper` change the JSON of successful
/// answers (given the request path); everything else (the page, its scripts) passes as is.
pub fn tampering_proxy(
    upstream: &str,
    tamper: impl Fn(&str, &mut Value) + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let upstream = upstream.to_owned();
    let tamper = std::sync::Arc::new(tamper);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (upstream, tamper) = (upstream.clone(), tamper.clone());
            // The browser opens several connections at once.
            std::thread::spawn(move || serve_one(stream, &upstream, &*tamper));
        }
    });
    url
}

fn serve_one(stream: TcpStream, upstream: &str, tamper: &dyn Fn(&str, &mut Value)) {
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    let _ = reader.read_line(&mut request);
    let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut line = String::new();
    while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
        line.clear();
    }
    let response = match ureq::get(&format!("{upstream}{path}")).call() {
        Ok(r) => Some((200, r)),
        Err(ureq::Error::Status(code, r)) => Some((code, r)),
        Err(_) => None,
    };
    let (status, content_type, mut body) = match response {
        Some((status, r)) => {
            let ct = r.header("content-type").unwrap_or("text/plain").to_owned();
            let mut bytes = Vec::new();
            let _ = r.into_reader().read_to_end(&mut bytes);
            (status, ct, bytes)
        }
        None => (502, "application/json".into(), b"{}".to_vec()),
    };
    if status == 200 && content_type.starts_with("application/json") {
        if let Ok(mut v) = serde_json::from_slice::<Value>(&body) {
            tamper(&path, &mut v);
            body = v.to_string().into_bytes();
        }
    }
    let mut out = &stream;
    let _ = write!(
        out,
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(&body);
}

/// Flips the lowest bit of the last byte of the hex string at `pointer`.
pub fn flip(v: &mut Value, pointer: &str) {
    let s = v
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} missing"));
    let mut bytes = hex::decode(s.as_str().expect("hex string")).expect("hex");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    *s = json!(hex::encode(bytes));
}

/// Turns the payout claimed by the `bet_evaluated` replay step into another one.
pub fn change_payout(v: &mut Value) {
    let step = v["replay_steps"]
        .as_array_mut()
        .and_then(|s| s.iter_mut().find(|s| s["action"] == "bet_evaluated"))
        .expect("a bet_evaluated step");
    let payout = step["payout"].as_str().expect("payout").to_owned();
    step["payout"] = json!(if payout == "0.00" { "5.00" } else { "0.00" });
}
