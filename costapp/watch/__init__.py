"""The budget watch: a budget on a saved plan, priced again when the prices it rests on move."""
