//! Pages of the API's lists (`?page=N&per_page=M`): no answer grows with
//! the history. A page says where the others are the way GitHub's API
//! does, in a `Link` header (`rel="next"`, `"prev"`, `"first"`, `"last"`),
//! and how many there are in all in `X-Total-Count` when that is known.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, HeaderValue};

use super::error::ApiError;

/// The highest page number asked for anywhere.
pub const MAX_PAGE: usize = 1_000_000;

/// The query's `key`, a number from 1 to `max`; `default` when absent.
pub fn number(
    q: &BTreeMap<String, String>,
    key: &str,
    max: usize,
    default: usize,
) -> Result<usize, ApiError> {
    match q.get(key) {
        None => Ok(default),
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(format!("{key} must be a number from 1 to {max}"))
            }),
    }
}

/// One page asked for: 1-based, `per_page` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub page: usize,
    pub per_page: usize,
}

/// The two query parameters a paged list takes.
pub const PARAMS: [&str; 2] = ["page", "per_page"];

impl Paging {
    /// From the query: `per_page` is `default` when not given and at most
    /// `max` (a page stays under about 1 MB).
    pub fn from_query(
        q: &BTreeMap<String, String>,
        default: usize,
        max: usize,
    ) -> Result<Paging, ApiError> {
        Ok(Paging {
            page: number(q, "page", MAX_PAGE, 1)?,
            per_page: number(q, "per_page", max, default)?,
        })
    }

    /// Rows passed over before this page.
    pub fn offset(&self) -> usize {
        (self.page - 1).saturating_mul(self.per_page)
    }

    /// This page of `rows` (all of them in memory already).
    pub fn slice<T>(&self, rows: Vec<T>) -> Vec<T> {
        rows.into_iter()
            .skip(self.offset())
            .take(self.per_page)
            .collect()
    }

    /// The pages a list of `total` rows has (at least one).
    pub fn pages(&self, total: usize) -> usize {
        total.div_ceil(self.per_page).max(1)
    }

    /// The `Link` and `X-Total-Count` headers of this page of `path`
    /// asked with `query`: `total` rows when known, else `more` says
    /// whether a next page has any.
    pub fn headers(
        &self,
        path: &str,
        query: &BTreeMap<String, String>,
        total: Option<usize>,
        more: bool,
    ) -> HeaderMap {
        let url = |page: usize| {
            let mut q = form_urlencoded::Serializer::new(String::new());
            for (k, v) in query.iter().filter(|(k, _)| k.as_str() != "page") {
                q.append_pair(k, v);
            }
            q.append_pair("page", &page.to_string());
            format!("{path}?{}", q.finish())
        };
        let last = total.map(|t| self.pages(t));
        let mut links = Vec::new();
        let has_next = match last {
            Some(l) => self.page < l,
            None => more,
        };
        if has_next {
            links.push(format!("<{}>; rel=\"next\"", url(self.page + 1)));
        }
        if self.page > 1 {
            links.push(format!("<{}>; rel=\"prev\"", url(self.page - 1)));
            links.push(format!("<{}>; rel=\"first\"", url(1)));
        }
        if let Some(l) = last {
            links.push(format!("<{}>; rel=\"last\"", url(l)));
        }
        let mut h = HeaderMap::new();
        if !links.is_empty()
            && let Ok(v) = HeaderValue::from_str(&links.join(", "))
        {
            h.insert("link", v);
        }
        if let Some(t) = total {
            h.insert("x-total-count", HeaderValue::from(t as u64));
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn pages_are_numbered_from_one_and_capped() {
        let p = Paging::from_query(&q(&[]), 100, 1000).unwrap();
        assert_eq!((p.page, p.per_page, p.offset()), (1, 100, 0));
        let p = Paging::from_query(&q(&[("page", "3"), ("per_page", "7")]), 100, 1000).unwrap();
        assert_eq!(p.offset(), 14);
        assert_eq!(p.slice((0..30).collect()), vec![14, 15, 16, 17, 18, 19, 20]);
        for bad in ["0", "-1", "x", "1001", ""] {
            assert!(Paging::from_query(&q(&[("per_page", bad)]), 100, 1000).is_err());
        }
        assert!(Paging::from_query(&q(&[("page", "0")]), 100, 1000).is_err());
    }

    #[test]
    fn links_keep_the_other_parameters_and_say_first_prev_next_last() {
        let p = Paging {
            page: 2,
            per_page: 10,
        };
        let h = p.headers(
            "/api/v1/x",
            &q(&[("state", "all"), ("page", "2")]),
            Some(35),
            false,
        );
        let link = h["link"].to_str().unwrap();
        assert!(
            link.contains("</api/v1/x?state=all&page=3>; rel=\"next\""),
            "{link}"
        );
        assert!(link.contains("page=1>; rel=\"prev\""), "{link}");
        assert!(link.contains("page=4>; rel=\"last\""), "{link}");
        assert_eq!(h["x-total-count"], "35");
        let end = Paging {
            page: 4,
            per_page: 10,
        }
        .headers("/x", &q(&[]), Some(35), false);
        assert!(!end["link"].to_str().unwrap().contains("next"));
        let open = Paging {
            page: 1,
            per_page: 10,
        }
        .headers("/x", &q(&[]), None, true);
        assert_eq!(open["link"], "</x?page=2>; rel=\"next\"");
        assert!(open.get("x-total-count").is_none());
        let alone = Paging {
            page: 1,
            per_page: 10,
        }
        .headers("/x", &q(&[]), None, false);
        assert!(alone.get("link").is_none());
    }
}
