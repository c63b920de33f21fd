"""What the product writes for people to read: the HTML report and the sweep's page, a step
as Markdown, diffs, a session written back, and what a shared report leaves out."""
