"""
Is it a three? Distance from feature space as a detector
========================================================

An eigenspace of the threes scores every test digit by its distance from
feature space (DFFS), in feature space (DIFS) and their combination, the
likelihood (Moghaddam & Pentland 1997): the ROC of each.
"""

import matplotlib.pyplot as plt

import eigenvision as ev

digits = ev.datasets.load_digits()
train, test = digits[:898], digits[898:]
space = ev.Eigenspace(n_components=10).fit(train.images[train.labels == 3])
is_three = test.labels == 3
scores = {
    "DFFS": -space.dffs(test.images),
    "DIFS": -space.difs(test.images),
    "likelihood": space.score_samples(test.images),
}

fig, ax = plt.subplots(figsize=(5, 4.5))
for name, score in scores.items():
    fpr, tpr, _ = ev.evaluate.roc_curve(is_three, score)
    ax.step(fpr, tpr, where="post", label=f"{name} (AUC {ev.evaluate.auc(fpr, tpr):.3f})")
ax.set_xlabel("false-positive rate")
ax.set_ylabel("true-positive rate")
ax.legend(loc="lower right")
ax.grid(alpha=0.3)
plt.show()
