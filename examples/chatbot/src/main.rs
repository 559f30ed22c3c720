//! `cargo run -p chatbot [-- --part N] [--base-url URL --model NAME]`: runs the tutorial's parts
//! (all by default) and prints each conversation; offline with the stand-in model, or against an
//! OpenAI-compatible server.

use std::sync::Arc;

use chatbot::{StandIn, part1, part2, part3, part4, part5, part6};
use trellis_agent::{Model, OpenAiCompatible};

const USAGE: &str = "usage: chatbot [--part 1-6] [--base-url URL --model NAME]";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "LangGraph's six-part basics tutorial in Trellis: a chatbot, tools, memory, human in"
        );
        println!(
            "the loop, custom state, time travel; each part prints its conversation. The model"
        );
        println!(
            "is a stand-in that answers from the conversation (offline), or an OpenAI-compatible"
        );
        println!("server.\n{USAGE}");
        return Ok(());
    }
    let (mut part, mut base_url, mut name) = (None, None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(USAGE);
        match arg.as_str() {
            "--part" => part = Some(value()?.parse::<u8>().map_err(|_| USAGE)?),
            "--base-url" => base_url = Some(value()?),
            "--model" => name = Some(value()?),
            _ => return Err(USAGE.into()),
        }
    }
    let model: Arc<dyn Model> = match (base_url, name) {
        (None, None) => Arc::new(StandIn),
        (Some(url), Some(name)) => Arc::new(OpenAiCompatible::new(&url, &name)?),
        _ => return Err(format!("--base-url and --model go together\n{USAGE}").into()),
    };
    let parts: Vec<u8> = match part {
        Some(n @ 1..=6) => vec![n],
        Some(_) => return Err(USAGE.into()),
        None => (1..=6).collect(),
    };
    let titles = [
        "a chatbot",
        "tools",
        "memory",
        "human in the loop",
        "custom state",
        "time travel",
    ];
    for n in parts {
        let model = Arc::clone(&model);
        let printed = match n {
            1 => part1(model).await?,
            2 => part2(model).await?,
            3 => part3(model).await?,
            4 => part4(model).await?,
            5 => part5(model).await?,
            _ => part6(model).await?,
        };
        println!("== part {n}: {}", titles[usize::from(n - 1)]);
        for line in printed {
            println!("{line}");
        }
    }
    Ok(())
}
