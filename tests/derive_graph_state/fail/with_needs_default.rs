// A run's input is folded into the field's default by the function, so the type needs one.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Budget {
    cents: u64,
}

fn lower(budget: &mut Budget, offered: Budget) {
    budget.cents = budget.cents.min(offered.cents);
}

#[derive(Clone, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Order {
    #[reducer(with = lower)]
    budget: Budget,
}

fn main() {}
