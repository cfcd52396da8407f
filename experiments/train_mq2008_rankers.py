"""Train learning-to-rank models on LETOR 4.0 MQ2008 (5 folds) and score the test folds.

Writes one LETOR-style Parquet table (``qid, docid, label, fold`` and one float score column per
ranker, every query scored by the model of the fold in which it is a test query), ready for::

    uefast reproduce reports/letor4_mq2008/input_scores.parquet --out reports/letor4_mq2008

Rankers (well-kept libraries only; install with ``pip install -e .[experiments]``):

* ``lgbm_lambdarank``  LightGBM LambdaRank (lambdarank objective), early stopping on the vali fold
* ``lgbm_xendcg``      LightGBM XE-NDCG (rank_xendcg objective), early stopping on the vali fold
* ``gbr``              scikit-learn HistGradientBoostingRegressor on the graded label (pointwise)
* ``random_forest``    scikit-learn RandomForestRegressor (pointwise)
* ``logreg``           scikit-learn L2 LogisticRegression on label >= 1 (pointwise classification)
* ``linear``           scikit-learn Ridge regression on the graded label (pointwise linear)
* ``random``           uniform random scores (control: should sit at the REB)

Data: ``$UEFAST_SHARED_DATA/letor4_mq2008/S1.txt .. S5.txt`` (default ``<repo>/../shared/data``).
Fold layout (LETOR readme): Fold i trains on S_i, S_i+1, S_i+2, validates on S_i+3, tests on S_i+4.
Everything is seeded; LightGBM runs deterministic single-threaded.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
_DOCID = re.compile(rb"#docid\s*=\s*(\S+)")


def data_dir() -> Path:
    root = Path(os.environ.get("UEFAST_SHARED_DATA", REPO.parent / "shared" / "data"))
    d = root / "letor4_mq2008"
    if not (d / "S1.txt").exists():
        sys.exit(f"MQ2008 not found in {d} (set UEFAST_SHARED_DATA)")
    return d


def load_subset(path: Path):
    from sklearn.datasets import load_svmlight_file

    x, y, qid = load_svmlight_file(str(path), query_id=True, n_features=46)
    docids = [m.group(1).decode() if (m := _DOCID.search(line)) else f"row{i}"
              for i, line in enumerate(path.read_bytes().splitlines())]
    return x.toarray().astype(np.float32), y.astype(np.int64), qid.astype(np.int64), np.asarray(docids)


def group_sizes(qid: np.ndarray) -> np.ndarray:
    change = np.flatnonzero(np.diff(qid)) + 1
    return np.diff(np.concatenate(([0], change, [qid.size])))


def fit_predict(name: str, tr, va, te, seed: int) -> np.ndarray:
    (xtr, ytr, qtr), (xva, yva, qva), xte = tr, va, te
    if name.startswith("lgbm_"):
        import lightgbm as lgb

        obj = {"lgbm_lambdarank": "lambdarank", "lgbm_xendcg": "rank_xendcg"}[name]
        model = lgb.LGBMRanker(objective=obj, n_estimators=500, learning_rate=0.05, num_leaves=31,
                               min_child_samples=20, subsample=0.8, subsample_freq=1,
                               colsample_bytree=0.8, random_state=seed, n_jobs=1,
                               deterministic=True, force_row_wise=True, verbose=-1)
        model.fit(xtr, ytr, group=group_sizes(qtr), eval_set=[(xva, yva)], eval_group=[group_sizes(qva)],
                  eval_at=[10], callbacks=[lgb.early_stopping(50, verbose=False)])
        return model.predict(xte)
    if name == "gbr":
        from sklearn.ensemble import HistGradientBoostingRegressor

        return HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, early_stopping=True,
                                             random_state=seed).fit(xtr, ytr).predict(xte)
    if name == "random_forest":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(n_estimators=200, min_samples_leaf=5, max_features=0.3,
                                     random_state=seed, n_jobs=1).fit(xtr, ytr).predict(xte)
    if name == "logreg":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        m = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
        return m.fit(xtr, (ytr >= 1).astype(int)).decision_function(xte)
    if name == "linear":
        from sklearn.linear_model import Ridge

        return Ridge(alpha=1.0).fit(xtr, ytr).predict(xte)
    raise ValueError(f"unknown ranker {name!r}")


RANKERS = ["lgbm_lambdarank", "lgbm_xendcg", "gbr", "random_forest", "logreg", "linear"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "reports" / "letor4_mq2008" / "input_scores.parquet"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    d = data_dir()
    subsets = {i: load_subset(d / f"S{i}.txt") for i in range(1, 6)}
    cols: dict[str, list] = {c: [] for c in ("qid", "docid", "label", "fold", *RANKERS, "random")}
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    for fold in range(1, 6):
        s = [((fold - 1 + j) % 5) + 1 for j in range(5)]  # train s[0:3], vali s[3], test s[4]
        tr = [np.concatenate([subsets[i][c] for i in s[:3]]) for c in range(3)]
        va = subsets[s[3]][:3]
        xte, yte, qte, dte = subsets[s[4]]
        cols["qid"] += qte.tolist()
        cols["docid"] += dte.tolist()
        cols["label"] += yte.tolist()
        cols["fold"] += [fold] * yte.size
        for name in RANKERS:
            cols[name] += fit_predict(name, tr, va, xte, args.seed).astype(np.float64).tolist()
            print(f"fold {fold}: {name} done (t={time.perf_counter() - t0:.1f}s)", file=sys.stderr, flush=True)
        cols["random"] += rng.random(yte.size).tolist()
    table = pa.table({
        "qid": pa.array(cols["qid"], pa.int64()), "docid": pa.array(cols["docid"], pa.string()),
        "label": pa.array(cols["label"], pa.int64()), "fold": pa.array(cols["fold"], pa.int8()),
        **{n: pa.array(cols[n], pa.float64()) for n in (*RANKERS, "random")},
    })
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out, compression="zstd")
    print(f"wrote {table.num_rows} rows, {len(set(cols['qid']))} queries -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
