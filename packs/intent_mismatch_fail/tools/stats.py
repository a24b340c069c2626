# stats — a reach-wasm tool in Python (kind "python") of the chart pack.
# Input {"path": "data/sales.csv", "group": "region", "value": "amount"} -> output
# {"rows": N, "total": T, "mean": M, "series": [{"label", "value"}, ...]}: the CSV's `value` column summed per
# `group`, in the order the groups first appear.


def main(input, reach):
    lines = [l for l in reach.read_text(input["path"]).split("\n") if l.strip()]
    header = lines[0].split(",")
    g = header.index(input["group"])
    v = header.index(input["value"])
    order = []
    sums = {}
    for line in lines[1:]:
        cells = line.split(",")
        label = cells[g].strip()
        if label not in sums:
            order.append(label)
            sums[label] = 0
        sums[label] += int(cells[v])
    total = sum(sums.values())
    rows = len(lines) - 1
    reach.log("summed %d rows into %d groups" % (rows, len(order)))
    return {"rows": rows, "total": total, "mean": total // max(1, rows), "series": [{"label": k, "value": sums[k]} for k in order]}
