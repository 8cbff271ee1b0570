//! A webhook listener on 127.0.0.1 for the alert tests: it answers each request with the next
//! status of its list (then 200) and keeps what it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }
}

pub struct Listener {
    pub url: String,
    pub got: Arc<Mutex<Vec<Request>>>,
}

/// Listen on a free port of 127.0.0.1, answering `statuses` in turn (then 200).
pub fn listen(statuses: &[u16]) -> Listener {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let keep = got.clone();
    let mut answers: Vec<u16> = statuses.to_vec();
    answers.reverse();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (method, path) = (
                parts.next().unwrap_or("").to_string(),
                parts.next().unwrap_or("").to_string(),
            );
            let mut headers = Vec::new();
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            keep.lock().unwrap().push(Request {
                method,
                path,
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            let code = answers.pop().unwrap_or(200);
            let _ = write!(
                s,
                "HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    Listener { url, got }
}

impl Listener {
    pub fn requests(&self) -> Vec<Request> {
        self.got.lock().unwrap().clone()
    }
}
