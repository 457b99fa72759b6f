"""
Recognition rate against the number of components
=================================================

1-nearest-neighbour recognition of scikit-learn's digits in component space,
against ``r``: a handful of components already match the raw pixels.
"""

import matplotlib.pyplot as plt

import eigenvision as ev

digits = ev.datasets.load_digits()
train, test = digits[:898], digits[898:]
pixels = ev.NearestNeighbor().fit(train.images.reshape(len(train), -1))
_, rows = pixels.kneighbors(test.images.reshape(len(test), -1), 1)
baseline = ev.evaluate.recognition_rate(test.labels, train.labels[rows[:, 0]])

ranks = [2, 4, 6, 8, 10, 15, 20, 30, 40]
rates = []
for r in ranks:
    model = ev.Recognizer(n_components=r).fit(train)
    rates.append(ev.evaluate.recognition_rate(test.labels, model.predict(test.images)))
print(f"pixels {baseline:.1%}; r=15: {rates[ranks.index(15)]:.1%}")

fig, ax = plt.subplots(figsize=(5.5, 4))
ax.plot(ranks, rates, "o-", label="1-NN in component space")
ax.axhline(baseline, color="k", ls="--", label="1-NN on the 64 pixels")
ax.set_xlabel("number of components r")
ax.set_ylabel("recognition rate")
ax.set_ylim(0.5, 1.0)
ax.grid(alpha=0.3)
ax.legend(loc="lower right")
plt.show()
