//! A control surface for Trellis graphs: an app registers its compiled graphs (and agents) with
//! a store, and the server lists their definitions, starts runs (executed by its workers, from
//! the store's queue), shows and cancels them, browses their checkpoints, streams their events
//! and resumes the paused ones — over REST, server-sent events and JSON-RPC.
//!
//! Runs live in the store, not in the server: a server restarted continues what was queued or
//! running, and several servers on one PostgreSQL store share the work.
//!
//! ```no_run
//! # async fn example(graph: trellis::CompiledGraph<trellis_agent::TurnState>) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use trellis::checkpoint::SqliteCheckpointer;
//! use trellis_server::{ServeOptions, Server};
//!
//! let store = Arc::new(SqliteCheckpointer::open("runs.db")?);
//! let server = Server::builder(store).graph(graph).build()?;
//! let running = server.serve(ServeOptions::default()).await?; // 127.0.0.1:8080
//! println!("listening on http://{}", running.local_addr());
//! running.wait().await;
//! # Ok(()) }
//! ```
//!
//! See `docs/server.md` in the repository for every resource and method.

mod api;
mod doors;
mod error;
mod events;
mod langgraph;
mod registry;
mod rpc;
mod state;
mod studio;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::de::DeserializeOwned;
use trellis::checkpoint::RunQueue;
use trellis::run::CancellationToken;
use trellis::{CompiledGraph, interrupt::ApplyResume};
use trellis_agent::{AgentCard, AgentFields, AgentGraph};

pub use error::ApiError;
use registry::{Served, ServedGraph};
use state::App;

/// The graphs and agents to serve, on one store.
pub struct ServerBuilder {
    store: Arc<dyn RunQueue>,
    graphs: Vec<Arc<dyn Served>>,
    agents: BTreeMap<String, AgentCard>,
    workers: usize,
}

/// Why a server could not be built or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// Two graphs (or an agent and a graph) have one name.
    #[error("two graphs are named `{0}`")]
    DuplicateGraph(String),
    /// The address is not on this machine and no token was given.
    #[error(
        "binding {0} (not a loopback address) requires a bearer token: set `ServeOptions::token`"
    )]
    TokenRequired(SocketAddr),
    /// An allowed host that is not `name` or `name:port`.
    #[error("`{0}` is not a host name to allow: give `name` or `name:port`")]
    AllowedHost(String),
    /// An allowed origin that is not `scheme://name[:port]`.
    #[error("`{0}` is not an origin to allow: give `http://name[:port]` or `https://name[:port]`")]
    AllowedOrigin(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ServerBuilder {
    /// Serves `graph`: its runs are created and answered through the server, and executed by
    /// its workers.
    #[must_use]
    pub fn graph<S>(mut self, graph: CompiledGraph<S>) -> Self
    where
        S: ApplyResume + Default,
        S::Input: DeserializeOwned,
    {
        self.graphs
            .push(Arc::new(ServedGraph::new(graph, Arc::clone(&self.store))));
        self
    }

    /// Serves an agent: listed with its card, run as the graph named after it (its state's
    /// `fields`, when it carries the application's own, read and written as JSON like the rest).
    #[must_use]
    pub fn agent<F: AgentFields>(mut self, card: AgentCard, agent: &AgentGraph<F>) -> Self {
        self.agents.insert(card.name.clone(), card);
        self.graph(agent.graph().clone())
    }

    /// How many workers execute each graph's runs in this server (2 by default; 0 for a
    /// server that only queues runs for workers elsewhere).
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// The server.
    ///
    /// # Errors
    /// [`ServerError::DuplicateGraph`].
    pub fn build(self) -> Result<Server, ServerError> {
        let mut graphs = BTreeMap::new();
        for graph in self.graphs {
            let name = graph.name().to_owned();
            if graphs.insert(name.clone(), graph).is_some() {
                return Err(ServerError::DuplicateGraph(name));
            }
        }
        Ok(Server {
            app: Arc::new(App {
                graphs,
                agents: self.agents,
                store: self.store,
                started: trellis::run::Timestamp::now(),
                stopping: CancellationToken::new(),
            }),
            workers: self.workers,
        })
    }
}

/// A server: its routes, and its workers once it serves.
#[derive(Clone)]
pub struct Server {
    app: Arc<App>,
    workers: usize,
}

/// Where and how a server listens.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address (127.0.0.1:8080 by default). Anything but a loopback address needs a token.
    pub addr: SocketAddr,
    /// A bearer token every request must carry (`Authorization: Bearer …`; an event stream,
    /// which a browser's `EventSource` opens without headers, may give it as
    /// `?access_token=…`). An empty or blank one is none.
    pub token: Option<String>,
    /// The largest request body accepted, in bytes (1 MiB by default).
    pub body_limit: usize,
    /// Names a request's `Host` may give besides the server's address (and `localhost` on a
    /// loopback address): `name` for any port, `name:port` for one — the name of a reverse
    /// proxy in front of it, say. Any other name is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Origins whose pages may call the server from a browser (`https://app.example`),
    /// besides its own (the studio). A browser request from any other origin is refused.
    pub allowed_origins: Vec<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            token: None,
            body_limit: 1 << 20,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// A server listening, with its workers.
pub struct Running {
    addr: SocketAddr,
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// The address it listens on (the port chosen, when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops listening and stops the workers (a run in progress goes back to the queue after
    /// its current step), and waits for them.
    pub async fn shutdown(self) {
        self.stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
    }

    /// Waits until the process is asked to stop (Ctrl-C), then shuts down.
    pub async fn wait(self) {
        let _ = tokio::signal::ctrl_c().await;
        self.shutdown().await;
    }
}

impl Server {
    /// A server of runs kept in `store`.
    pub fn builder(store: Arc<dyn RunQueue>) -> ServerBuilder {
        ServerBuilder {
            // Its writes wake the server's workers, waits and streams (see `Announced`).
            store: trellis::checkpoint::Announced::wrap(store),
            graphs: Vec::new(),
            agents: BTreeMap::new(),
            workers: 2,
        }
    }

    /// The API's routes (REST, the event streams, `/rpc`), without authentication (for
    /// embedding in an app that has its own).
    pub fn router(&self, body_limit: usize) -> Router {
        Router::new()
            .merge(api::routes())
            .merge(langgraph::routes())
            .route("/rpc", post(rpc::handle))
            .layer(axum::extract::DefaultBodyLimit::max(body_limit))
            .with_state(Arc::clone(&self.app))
    }

    /// The studio's page and script: static, no data of their own (the page reads the API,
    /// with the token given as `#token=…` in its address).
    pub fn studio() -> Router {
        studio::routes()
    }

    /// Listens on `options.addr` and starts the workers.
    ///
    /// # Errors
    /// [`ServerError::TokenRequired`] for an address off this machine without a token;
    /// [`ServerError::AllowedHost`], [`ServerError::AllowedOrigin`]; [`ServerError::Bind`].
    pub async fn serve(self, mut options: ServeOptions) -> Result<Running, ServerError> {
        // A blank token would let `?access_token=` with nothing in it through: it is none.
        options.token = options.token.filter(|token| !token.trim().is_empty());
        if !options.addr.ip().is_loopback() && options.token.is_none() {
            return Err(ServerError::TokenRequired(options.addr));
        }
        let mut router = self.router(options.body_limit);
        if let Some(token) = options.token.clone() {
            router = router.layer(middleware::from_fn_with_state(
                Arc::<str>::from(token),
                authorize,
            ));
        }
        let (hosts, origins) = allowed(&options)?;
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|source| ServerError::Bind {
                addr: options.addr,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: options.addr,
            source,
        })?;
        // Every route, the studio's too, behind the doors (see `doors`).
        let router = router
            .merge(Server::studio())
            .layer(middleware::from_fn_with_state(
                Arc::new(doors::Doors {
                    addr,
                    hosts,
                    origins,
                }),
                doors::check,
            ));
        let stop = self.app.stopping.clone();
        let mut tasks = Vec::new();
        for graph in self.app.graphs.values() {
            for _ in 0..self.workers {
                tasks.push(graph.spawn_worker(stop.clone()));
            }
        }
        let shutdown = stop.clone();
        tasks.push(tokio::spawn(async move {
            let serving = axum::serve(listener, router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await });
            if let Err(error) = serving.await {
                tracing::error!(target: "trellis_server", %error, "the server stopped");
            }
        }));
        tracing::info!(target: "trellis_server", %addr, "listening");
        Ok(Running { addr, stop, tasks })
    }
}

/// The allowed hosts and origins of `options`, checked and in lower case.
fn allowed(options: &ServeOptions) -> Result<(Vec<String>, Vec<String>), ServerError> {
    let hosts = options
        .allowed_hosts
        .iter()
        .map(|host| {
            let lower = host.trim().to_ascii_lowercase();
            match lower.parse::<axum::http::uri::Authority>() {
                Ok(authority) if !lower.contains('@') && !authority.host().is_empty() => Ok(lower),
                _ => Err(ServerError::AllowedHost(host.clone())),
            }
        })
        .collect::<Result<_, _>>()?;
    let origins = options
        .allowed_origins
        .iter()
        .map(|origin| {
            let lower = origin.trim().trim_end_matches('/').to_ascii_lowercase();
            let authority = lower
                .strip_prefix("http://")
                .or_else(|| lower.strip_prefix("https://"));
            match authority.map(str::parse::<axum::http::uri::Authority>) {
                Some(Ok(authority)) if !authority.as_str().contains('@') => Ok(lower),
                _ => Err(ServerError::AllowedOrigin(origin.clone())),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok((hosts, origins))
}

/// Refuses a request without the bearer token: in `Authorization`, or — for an event stream
/// only, which a browser's `EventSource` opens without headers — in `?access_token=`. (A token
/// in an address ends up in logs and histories; only where there is no other way.)
async fn authorize(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let stream =
        request.method() == axum::http::Method::GET && request.uri().path().ends_with("/stream");
    let query = request.uri().query().filter(|_| stream).unwrap_or_default();
    let in_query = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("access_token="));
    if bearer
        .or(in_query)
        .is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
    {
        next.run(request).await
    } else {
        ApiError::unauthorized().into_response()
    }
}

/// Compares without stopping at the first difference, so the time taken tells the token's
/// length at most, not its content.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
