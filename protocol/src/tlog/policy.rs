//! A verifier's witness policy in the C2SP tlog-policy format:
//!
//! ```text
//! log <vkey> [<url>]
//! witness <name> <vkey> [<url>]
//! group <name> all|any|<k> <member>...
//! quorum <name>|none
//! ```
//!
//! Names refer only to lines above them; exactly one quorum line; no key listed twice.

use std::collections::{BTreeMap, BTreeSet};

use super::note::{parse_vkey, VKey, ALG_COSIGNATURE_V1, ALG_ED25519};

/// The most witnesses [`Policy::disjoint_quorums`] searches (2^n sets).
pub const MAX_SPLIT_CHECKED: usize = 16;

/// One witness of a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyWitness {
    pub name: String,
    pub key: VKey,
    pub url: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Rule {
    Witness(String),
    Group { k: usize, members: Vec<String> },
}

/// A parsed policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub logs: Vec<(VKey, Option<String>)>,
    pub witnesses: Vec<PolicyWitness>,
    rules: BTreeMap<String, Rule>,
    /// None: `quorum none`, no cosignature required.
    quorum: Option<String>,
}

impl Policy {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut logs = Vec::new();
        let mut witnesses: Vec<PolicyWitness> = Vec::new();
        let mut rules: BTreeMap<String, Rule> = BTreeMap::new();
        let mut quorum: Option<Option<String>> = None;
        let mut keys = BTreeSet::new();
        for (i, raw) in text.lines().enumerate() {
            let at = |m: String| format!("policy line {}: {m}", i + 1);
            let words: Vec<&str> = raw.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
            let Some((&first, rest)) = words.split_first() else {
                continue;
            };
            if first.starts_with('#') {
                continue;
            }
            match first {
                "log" => {
                    let (vkey, url) = match rest {
                        [k] => (*k, None),
                        [k, u] => (*k, Some((*u).to_owned())),
                        _ => return Err(at("log takes a vkey and an optional URL".into())),
                    };
                    let key = parse_vkey(vkey).map_err(at)?;
                    if key.alg != ALG_ED25519 {
                        return Err(at("a log key is an Ed25519 note key (type 0x01)".into()));
                    }
                    if !keys.insert(key.public_key) {
                        return Err(at("this key is listed twice".into()));
                    }
                    logs.push((key, url));
                }
                "witness" => {
                    let (name, vkey, url) = match rest {
                        [n, k] => (*n, *k, None),
                        [n, k, u] => (*n, *k, Some((*u).to_owned())),
                        _ => {
                            return Err(at(
                                "witness takes a name, a vkey and an optional URL".into()
                            ))
                        }
                    };
                    if name == "none" || rules.contains_key(name) {
                        return Err(at(format!("the name {name:?} is taken")));
                    }
                    let key = parse_vkey(vkey).map_err(at)?;
                    if key.alg != ALG_COSIGNATURE_V1 {
                        return Err(at(
                            "a witness key is a cosignature/v1 key (type 0x04)".into()
                        ));
                    }
                    if !keys.insert(key.public_key) {
                        return Err(at("this key is listed twice".into()));
                    }
                    rules.insert(name.to_owned(), Rule::Witness(key.name.clone()));
                    witnesses.push(PolicyWitness {
                        name: name.to_owned(),
                        key,
                        url,
                    });
                }
                "group" => {
                    let [name, k, members @ ..] = rest else {
                        return Err(at("group takes a name, all|any|k and members".into()));
                    };
                    if members.is_empty() {
                        return Err(at("a group needs at least one member".into()));
                    }
                    if *name == "none" || rules.contains_key(*name) {
                        return Err(at(format!("the name {name:?} is taken")));
                    }
                    let mut seen = BTreeSet::new();
                    for m in members {
                        if !rules.contains_key(*m) {
                            return Err(at(format!("{m:?} is not defined above")));
                        }
                        if !seen.insert(*m) {
                            return Err(at(format!("{m:?} is listed twice")));
                        }
                    }
                    let k = match *k {
                        "all" => members.len(),
                        "any" => 1,
                        n => n
                            .parse::<usize>()
                            .ok()
                            .filter(|k| (1..=members.len()).contains(k) && !n.starts_with('0'))
                            .ok_or_else(|| {
                                at(format!("{n:?} is not all, any or 1..={}", members.len()))
                            })?,
                    };
                    rules.insert(
                        (*name).to_owned(),
                        Rule::Group {
                            k,
                            members: members.iter().map(|m| (*m).to_owned()).collect(),
                        },
                    );
                }
                "quorum" => {
                    if quorum.is_some() {
                        return Err(at("a policy has exactly one quorum line".into()));
                    }
                    let [name] = rest else {
                        return Err(at("quorum takes one name".into()));
                    };
                    if *name == "none" {
                        quorum = Some(None);
                    } else if rules.contains_key(*name) {
                        quorum = Some(Some((*name).to_owned()));
                    } else {
                        return Err(at(format!("{name:?} is not defined above")));
                    }
                }
                other => return Err(at(format!("unknown keyword {other:?}"))),
            }
        }
        let quorum = quorum.ok_or("the policy has no quorum line")?;
        Ok(Self {
            logs,
            witnesses,
            rules,
            quorum,
        })
    }

    /// Whether a set of witnesses (by the policy's names) satisfies the quorum.
    pub fn satisfied_by(&self, cosigned: &BTreeSet<String>) -> bool {
        match &self.quorum {
            None => true,
            Some(q) => self.holds(q, cosigned),
        }
    }

    /// Whether the policy requires any cosignature at all.
    pub fn requires_witnesses(&self) -> bool {
        self.quorum.is_some()
    }

    /// The quorum in words, for reports: `2 of w1, w2, w3`.
    pub fn describe(&self) -> String {
        match &self.quorum {
            None => "none (no cosignature required)".into(),
            Some(q) => self.describe_rule(q),
        }
    }

    fn describe_rule(&self, name: &str) -> String {
        match self.rules.get(name) {
            Some(Rule::Witness(_)) | None => name.to_owned(),
            Some(Rule::Group { k, members }) => format!(
                "{k} of ({})",
                members
                    .iter()
                    .map(|m| self.describe_rule(m))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn holds(&self, name: &str, cosigned: &BTreeSet<String>) -> bool {
        match self.rules.get(name) {
            Some(Rule::Witness(_)) => cosigned.contains(name),
            Some(Rule::Group { k, members }) => {
                members.iter().filter(|m| self.holds(m, cosigned)).count() >= *k
            }
            None => false,
        }
    }

    /// Two disjoint sets of witnesses that each satisfy the quorum, if there are any: then two
    /// histories under one log key, each shown to its own set, both pass (docs/PROTOCOL.md §21,
    /// "Known gaps", 2). None also for `quorum none` (which trusts the log alone anyway) and for
    /// a policy of more than [`MAX_SPLIT_CHECKED`] witnesses, which is not searched.
    pub fn disjoint_quorums(&self) -> Option<(Vec<String>, Vec<String>)> {
        let n = self.witnesses.len();
        if self.quorum.is_none() || n > MAX_SPLIT_CHECKED {
            return None;
        }
        let set = |mask: u32| -> BTreeSet<String> {
            (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| self.witnesses[i].name.clone())
                .collect()
        };
        let all = (1u32 << n) - 1;
        // The quorum is monotone: a set and its complement is the only pair worth trying.
        (1..all)
            .find(|&m| self.satisfied_by(&set(m)) && self.satisfied_by(&set(all & !m)))
            .map(|m| {
                let (a, b) = (set(m), set(all & !m));
                (a.into_iter().collect(), b.into_iter().collect())
            })
    }

    /// The policy name of the witness with this key name, if any.
    pub fn witness_named(&self, key_name: &str) -> Option<&PolicyWitness> {
        self.witnesses.iter().find(|w| w.key.name == key_name)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::note::{vkey, ALG_COSIGNATURE_V1, ALG_ED25519};
    use super::*;

    fn key(name: &str, alg: u8, b: u8) -> String {
        let sk = ed25519_dalek::SigningKey::from_bytes(&[b; 32]);
        vkey(name, alg, &sk.verifying_key().to_bytes())
    }

    #[test]
    fn a_quorum_two_disjoint_sets_satisfy_is_found() {
        let policy = |quorum: &str| {
            let mut text = format!("log {}\n", key("log.example", ALG_ED25519, 1));
            for i in 0..4u8 {
                text += &format!(
                    "witness W{i} {}\n",
                    key(&format!("w{i}"), ALG_COSIGNATURE_V1, 10 + i)
                );
            }
            Policy::parse(&(text + quorum)).unwrap()
        };
        // 2 of 4: {W0, W1} and {W2, W3} each pass.
        let (a, b) = policy("group g 2 W0 W1 W2 W3\nquorum g\n")
            .disjoint_quorums()
            .unwrap();
        assert!(a.len() >= 2 && b.len() >= 2 && a.iter().all(|w| !b.contains(w)));
        // A majority (3 of 4) always overlaps; so does a single named witness.
        assert_eq!(
            policy("group g 3 W0 W1 W2 W3\nquorum g\n").disjoint_quorums(),
            None
        );
        assert_eq!(policy("quorum W2\n").disjoint_quorums(), None);
        assert!(policy("group g any W0 W1\nquorum g\n")
            .disjoint_quorums()
            .is_some());
        assert_eq!(policy("quorum none\n").disjoint_quorums(), None);
    }

    #[test]
    fn the_specs_example_shape_parses_and_counts() {
        let text = format!(
            "# a comment\nlog {}\nwitness X1 {}\nwitness X2 {} https://x2.example/\n\twitness X3 {}\n\
             group X 2 X1 X2 X3\nwitness Y1 {}\ngroup Y any Y1\ngroup XY all X Y\nquorum XY\n",
            key("log.example", ALG_ED25519, 1),
            key("x1", ALG_COSIGNATURE_V1, 2),
            key("x2", ALG_COSIGNATURE_V1, 3),
            key("x3", ALG_COSIGNATURE_V1, 4),
            key("y1", ALG_COSIGNATURE_V1, 5),
        );
        let p = Policy::parse(&text).unwrap();
        let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        assert!(p.satisfied_by(&set(&["X1", "X3", "Y1"])));
        assert!(!p.satisfied_by(&set(&["X1", "Y1"])));
        assert!(!p.satisfied_by(&set(&["X1", "X2"])));
        assert_eq!(p.describe(), "2 of (2 of (X1, X2, X3), 1 of (Y1))");
        assert_eq!(p.witnesses[1].url.as_deref(), Some("https://x2.example/"));
    }

    #[test]
    fn bad_policies_are_refused_with_their_line() {
        let w = key("w", ALG_COSIGNATURE_V1, 2);
        for (text, says) in [
            (format!("witness a {w}\n"), "no quorum"),
            (format!("witness a {w}\nquorum b\n"), "line 2"),
            (format!("witness a {w}\nwitness b {w}\nquorum a\n"), "twice"),
            (format!("witness a {w}\ngroup g 2 a\nquorum g\n"), "1..=1"),
            (
                format!("witness a {w}\nquorum a\nquorum a\n"),
                "exactly one",
            ),
            ("quorum none\nfrobnicate\n".to_owned(), "unknown keyword"),
            (format!("log {w}\nquorum none\n"), "type 0x01"),
        ] {
            let e = Policy::parse(&text).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
        assert!(!Policy::parse("quorum none\n").unwrap().requires_witnesses());
    }
}
